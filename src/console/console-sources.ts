import type { Catalog } from '../pipeline/registry.js'
import type { GatewayMetrics } from '../observability/metrics.js'
import type { Readiness } from '../observability/readiness.js'
import type { SharedResources } from '../runtime/shared-resources.js'
import type { Snapshot } from '../runtime/snapshot.js'
import type { ReloadHistory } from './reload-history.js'

/**
 * What the console reads of a running gateway, declared here so that the console depends on start-up's
 * interfaces rather than on start-up itself: a booted gateway (src/start/boot.ts) satisfies it as it is.
 */
export interface ConsoleSources {
  readonly gateway: {
    readonly catalog: Catalog
    readonly shared: SharedResources
    current (): Snapshot
  }
  /** The gateway's metrics; undefined with `admin: false` (nothing is collected, no console). */
  readonly metrics: GatewayMetrics | undefined
  readonly readiness: Pick<Readiness, 'report'>
  readonly reloads: Pick<ReloadHistory, 'file' | 'list'>
}
