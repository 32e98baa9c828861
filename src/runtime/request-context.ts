import type { Principal, RequestState } from '../plugin/request-state.js'
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
