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
  /**
   * `service/routeId` → the route's steps that are run again on its open WebSockets after a reload (policies with
   * `recheck`), for the routes that may be upgraded.
   */
  readonly rechecks?: ReadonlyMap<string, readonly PolicyStep[]>
  /** `service/routeId` → the WebSocket limits of each route that may be upgraded (docs/websocket.md). */
  readonly upgrades?: ReadonlyMap<string, UpgradeLimits>
  /**
   * service → the ids of its routes whose chain ends in the `cache` policy; undefined when no route caches. Only
   * these routes' answers are counted in lanegate_cache_lookups_total, so the others never read `X-Cache`.
   */
  readonly cacheRoutes?: ReadonlyMap<string, ReadonlySet<string>>
  /**
   * Each built step → the name of its policy: a refusal names its policy from the step that refused, whichever
   * subset of a chain ran (the whole chain, a preflight's steps, a WebSocket's rechecks).
   */
  readonly stepPolicies?: ReadonlyMap<PolicyStep, string>
}

/** The limits of the WebSocket connections of one route. */
export interface UpgradeLimits {
  readonly max_message_bytes: number
  readonly idle_timeout_seconds: number
}

export function chainKey (service: string, routeId: string): string {
  return `${service}/${routeId}`
}
