import type { StoreAccess } from '../config/indexes.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import type { FastifyRequest } from 'fastify'
import type { Principal, RequestState } from '../plugin/request-state.js'
import type { ResponseHooks } from '../plugin/response-phase.js'
import type { PolicyStep } from '../plugin/step.js'
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
    /** The step that refused the request, if one did (`snapshot.stepPolicies` names its policy). */
    refusedBy?: PolicyStep
    /**
     * The organization or store a policy let this caller through to, with the lane serving it (the store-access
     * rule's answer, kept by `context.reachStore`): services read it instead of deciding again.
     */
    reached?: StoreAccess
  }
}

/**
 * `request.gw` as one class whose constructor writes every field, the optional ones as `undefined`: the steps that
 * fill them later (`setPrincipal`, the response phase, `organization`) then write a field the object already has.
 *
 * Why: as an object literal it sat outside V8's transition tree, so every request built two new hidden classes that
 * each scavenge copied and promoted (docs/performance.md, "The tricks in the code"). A class instance keeps one shape.
 */
class GatewayRequestState implements RequestContext {
  readonly snapshot: Snapshot
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
  principal: Principal | undefined
  response: ResponseHooks | undefined
  reached: StoreAccess | undefined
  refusedBy: PolicyStep | undefined

  constructor (snapshot: Snapshot, service: string, routeId: string, envelope: EnvelopeName) {
    this.snapshot = snapshot
    this.service = service
    this.routeId = routeId
    this.envelope = envelope
    this.principal = undefined
    this.response = undefined
    this.reached = undefined
    this.refusedBy = undefined
  }
}

/** A new `request.gw` for a request of `service`'s route `routeId`, rendered in `envelope`, on `snapshot`. */
export function requestContext (snapshot: Snapshot, service: string, routeId: string, envelope: EnvelopeName): RequestContext {
  return new GatewayRequestState(snapshot, service, routeId, envelope)
}

/** A chain's step refused `request` (runSteps' refusal observer): kept for the access log and the SERVER span. */
export function noteRefusingStep (request: FastifyRequest, step: PolicyStep): void {
  request.gw.refusedBy = step
}
