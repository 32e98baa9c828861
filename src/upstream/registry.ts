import type { LaneConfig } from '../config/types.js'
import { singleTargetSettings, type UpstreamSettings } from './settings.js'
import { Upstream, type UpstreamLogger } from './upstream.js'

interface Entry<S> {
  /** The config object the upstream was last reconciled with: the same object (one snapshot) is the common case. */
  source: S
  upstream: Upstream
}

/**
 * Upstreams by key, built on first use from a config object and reconciled when a reload hands a different one:
 * the same object costs one map lookup and one comparison per request. `derive` turns the config object into
 * settings; `Upstream.reconcile` keeps pools whose target and socket/timeouts did not change, and drains the rest.
 * The key is also the upstream's `upstream` label in the metrics (`Upstream.name`).
 */
export class UpstreamRegistry<S extends object> {
  private readonly entries = new Map<string, Entry<S>>()

  constructor (private readonly derive: (source: S) => UpstreamSettings, private readonly logger?: UpstreamLogger) {}

  /** The upstream for `key`, reconciled with `source` when that is not the object it was last given. */
  get (key: string, source: S): Upstream {
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      if (entry.source !== source) {
        entry.source = source
        entry.upstream.reconcile(this.derive(source))
      }
      return entry.upstream
    }
    const upstream = new Upstream(this.derive(source), this.logger, key)
    this.entries.set(key, { source, upstream })
    return upstream
  }

  /** Closes every connection of every upstream (shutdown). */
  async close (): Promise<void> {
    const upstreams = [...this.entries.values()].map((entry) => entry.upstream)
    this.entries.clear()
    await Promise.all(upstreams.map((upstream) => upstream.close()))
  }
}

/**
 * A store lane as an upstream: one target (its `base_url`), `max_sockets` connections, its timeouts (a body silent
 * for `response_timeout_ms` is cut too), its credential. No retry (there is no other target) and no health checks.
 */
export function laneUpstreamSettings (lane: LaneConfig): UpstreamSettings {
  return singleTargetSettings(lane.base_url, {
    label: 'The lane software',
    max_sockets: lane.max_sockets,
    timeouts: { connect_ms: lane.connect_timeout_ms, response_ms: lane.response_timeout_ms, body_idle_ms: lane.response_timeout_ms },
    credential: lane.credential,
  })
}

/**
 * The upstreams every service shares, opened with the shared resources and closed at shutdown: `lanes` by store
 * id (the live relay and fan-out's lane calls share each lane's pool, so fan-out honours the lane's socket cap),
 * and `services` for single upstreams keyed by the service that owns their settings (`timeseries`).
 */
export interface SharedUpstreams {
  readonly lanes: UpstreamRegistry<LaneConfig>
  readonly services: UpstreamRegistry<UpstreamSettings>
  close (): Promise<void>
}

export function createSharedUpstreams (logger?: UpstreamLogger): SharedUpstreams {
  const lanes = new UpstreamRegistry<LaneConfig>(laneUpstreamSettings, logger)
  const services = new UpstreamRegistry<UpstreamSettings>((settings) => settings, logger)
  return {
    lanes,
    services,
    async close () {
      await Promise.all([lanes.close(), services.close()])
    },
  }
}
