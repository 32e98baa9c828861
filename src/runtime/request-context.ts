import type { StoreAccess } from '../config/indexes.js'
import type { EnvelopeName } from '../errors/envelopes.js'
import type { GatewayError } from '../errors/gateway-error.js'
import type { Principal, RequestState } from '../plugin/request-state.js'
import type { ResponseHooks } from '../plugin/response-phase.js'
import type { Snapshot } from './snapshot.js'

export type { Principal }

/**
 * What one request carries through its policy chain and handler: the contract's `RequestState` (route, caller,
 * response hooks) and, inside the gateway, the config snapshot taken once when the request starts, so a hot reload
 * never changes the rules half-way through a request.
 */
export type RequestContext = RequestState

declare module '../plugin/request-state.js' {
  interface RequestState {
    readonly snapshot: Snapshot
  }
}

/**
 * `request.gw` as one class whose constructor writes every field, the optional ones as `undefined`: the steps that
 * fill them later (`setPrincipal`, the response phase, `organization`) then write a field the object already has.
 *
 * Why: it was an object literal of the four route fields, and V8 gave that literal a hidden class outside its
 * transition tree (no back pointer: `%DebugPrint` in a bench gateway). Adding a property to such an object never
 * makes a transition, so `principal` and `reached` built two new hidden classes and their descriptor arrays on every
 * request (`%HaveSameMap` false for 5,000 of 5,000 consecutive requests). The arrays were young and their classes
 * old, so each scavenge copied them and promoted ~200 KB, which doubled its pause (docs/performance.md, "Issue 24,
 * the tenth session"). A class instance starts from its constructor's own hidden class and keeps one shape.
 */
class GatewayRequestState implements RequestContext {
  readonly snapshot: Snapshot
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
  principal: Principal | undefined
  response: ResponseHooks | undefined
  reached: StoreAccess | undefined
  refusedAt: number | undefined
  refusal: GatewayError | undefined

  constructor (snapshot: Snapshot, service: string, routeId: string, envelope: EnvelopeName) {
    this.snapshot = snapshot
    this.service = service
    this.routeId = routeId
    this.envelope = envelope
    this.principal = undefined
    this.response = undefined
    this.reached = undefined
    this.refusedAt = undefined
    this.refusal = undefined
  }
}

/** A new `request.gw` for a request of `service`'s route `routeId`, rendered in `envelope`, on `snapshot`. */
export function requestContext (snapshot: Snapshot, service: string, routeId: string, envelope: EnvelopeName): RequestContext {
  return new GatewayRequestState(snapshot, service, routeId, envelope)
}
