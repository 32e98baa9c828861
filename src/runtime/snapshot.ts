import type { GatewayConfig } from '../config/types.js'
import type { ConfigIndexes } from '../config/indexes.js'
import type { PolicyStep } from '../plugin/step.js'

/**
 * One validated, immutable configuration with everything derived from it. A reload builds a whole new snapshot
 * and swaps it in one assignment; a request keeps the snapshot it started with.
 */
export interface Snapshot {
  /** Increments with each successful load; logged with reloads. */
  readonly version: number
  readonly config: GatewayConfig
  readonly indexes: ConfigIndexes
  /** `service/routeId` → the route's built chain (service policies, then the route's). */
  readonly chains: ReadonlyMap<string, readonly PolicyStep[]>
  /** `service/routeId` → the steps that answer the route's CORS preflights (policies with `answersPreflight`). */
  readonly preflights?: ReadonlyMap<string, readonly PolicyStep[]>
}

export function chainKey (service: string, routeId: string): string {
  return `${service}/${routeId}`
}
