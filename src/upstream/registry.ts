import { CIRCUIT_STATE_VALUE, type CircuitState } from './circuit-breaker.js'
import type { DeclaredLane } from './declared-lanes.js'
import { singleTargetSettings, type UpstreamSettings } from './settings.js'
import { SingleUseUpstream } from './single-use.js'
import type { Target } from './target.js'
import { Upstream, type UpstreamLogger } from './upstream.js'

interface Entry<S> {
  /** The config object the upstream was last reconciled with: the same object (one snapshot) is the common case. */
  source: S
  upstream: Upstream
}

/** One upstream's targets now, as the console lists them. */
export interface UpstreamState {
  readonly upstream: string
  readonly targets: ReadonlyArray<{
    readonly url: string
    readonly weight: number
    readonly state: Target['state']
    /** The target's circuit breaker state, absent when the upstream has none. */
    readonly circuit?: CircuitState
    readonly inFlight: number
    readonly lastProbe: Target['lastProbe']
  }>
}

/** When `reconcile` builds the upstream of a key it declares for the first time. */
export type DeclaredBuild =
  /** At once: its active health checks start with the snapshot, before any request (`proxy` blocks). */
  | 'with_snapshot'
  /** At its first request: nothing is made for a key never used (lanes: no health checks, possibly many). */
  | 'on_first_use'

/**
 * Upstreams by key, built from a config object and reconciled when a reload hands a different one: the same
 * object costs one map lookup and one comparison per request. `derive` turns the config object into settings;
 * `Upstream.reconcile` keeps pools whose target and socket/timeouts did not change, and drains the rest. The key
 * is also the upstream's `upstream` label in the metrics (`Upstream.name`).
 *
 * Until the first `reconcile` an upstream is built at the first use of its key and kept until shutdown (the
 * `timeseries` upstream). From the first `reconcile` on, the snapshots say which keys exist (`proxy` blocks,
 * lanes): `build` says whether a declared key's upstream is built with the snapshot or at its first use.
 */
export class UpstreamRegistry<S extends object> {
  private readonly entries = new Map<string, Entry<S>>()
  /** The keys the last `reconcile` declared; `undefined` before the first (keys then exist by first use). */
  private declared: ReadonlyMap<string, S> | undefined
  /** Upstreams a reconcile took out of service, until their pools have drained (shutdown destroys them). */
  private readonly draining = new Set<Upstream>()
  private readonly build: DeclaredBuild

  constructor (private readonly derive: (source: S) => UpstreamSettings, private readonly logger?: UpstreamLogger, options: { build?: DeclaredBuild } = {}) {
    this.build = options.build ?? 'with_snapshot'
  }

  /**
   * The upstream for `key`, reconciled with `source` when that is not the object it was last given. In a
   * registry the snapshots declare (`reconcile`), a key the last one did not declare is a request that started
   * before a reload removed its block or store (or a fan-out delivery that looked its lane up just before): it is
   * served on a single-use upstream of `source` without active health, whose pools close once that one request
   * has finished (`SingleUseUpstream`), so that it neither fails, nor brings the removed upstream back, nor leaves
   * a pool behind.
   */
  get (key: string, source: S): Upstream {
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      if (entry.source !== source) {
        // In a declared registry the last snapshot's source is the newest: a request that started on an older
        // snapshot (its chain straddled a reload that changed this key) must not reconcile the upstream back.
        const newest = this.declared?.get(key) ?? source
        if (entry.source !== newest) {
          entry.source = newest
          entry.upstream.reconcile(this.derive(newest))
        }
      }
      return entry.upstream
    }
    if (this.declared === undefined) return this.add(key, source)
    const declared = this.declared.get(key)
    return declared === undefined ? this.singleUse(key, source) : this.add(key, declared)
  }

  /**
   * Makes the registry hold the upstreams `wanted` declares (a snapshot's, at boot and on each reload): a new
   * key's upstream is built now (`build: 'with_snapshot'`: its active health checks start with the snapshot rather
   * than with the first request) or at its first use (`'on_first_use'`); a kept key's is reconciled in place now
   * (`Upstream.reconcile`: a changed target's pools drain at the reload, not at the next request); a key no longer
   * wanted is retired: its checks stop, its requests in flight finish, then its pools close. A key that comes back
   * later gets a new upstream.
   */
  reconcile (wanted: ReadonlyMap<string, S>): void {
    this.declared = wanted
    for (const [key, source] of wanted) {
      if (this.entries.has(key)) this.get(key, source) // reconciled in place when `source` changed
      else if (this.build === 'with_snapshot') this.add(key, source)
    }
    for (const [key, entry] of this.entries) {
      if (wanted.has(key)) continue
      this.entries.delete(key)
      this.draining.add(entry.upstream)
      void entry.upstream.retire().finally(() => this.draining.delete(entry.upstream))
    }
  }

  /** Keys with an upstream (for tests and logs). */
  keys (): string[] {
    return [...this.entries.keys()]
  }

  /** Each upstream's targets, available and ejected by its health checks right now (the metrics read it). */
  targetCounts (): Array<{ upstream: string, available: number, ejected: number }> {
    return [...this.entries].map(([key, entry]) => {
      const ejected = entry.upstream.targets.filter((target) => target.ejected).length
      return { upstream: key, available: entry.upstream.targets.length - ejected, ejected }
    })
  }

  /** Each target's circuit breaker state now (0 closed, 1 half-open, 2 open): targets without a breaker are left out. */
  circuitStates (): Array<{ service: string, target: string, state: number }> {
    const states: Array<{ service: string, target: string, state: number }> = []
    for (const [key, entry] of this.entries) {
      for (const target of entry.upstream.targets) {
        if (target.breaker !== undefined) states.push({ service: key, target: target.url, state: CIRCUIT_STATE_VALUE[target.breaker.currentState] })
      }
    }
    return states
  }

  /** Each upstream's targets as they are now (the console reads it when asked; nothing is kept per request). */
  states (): UpstreamState[] {
    return [...this.entries].map(([key, entry]) => ({
      upstream: key,
      targets: entry.upstream.targets.map((target) => ({
        url: target.url,
        weight: target.weight,
        state: target.state,
        ...(target.breaker === undefined ? {} : { circuit: target.breaker.currentState }),
        inFlight: target.inFlight,
        lastProbe: target.lastProbe,
      })),
    }))
  }

  private add (key: string, source: S): Upstream {
    const upstream = new Upstream(this.derive(source), this.logger, key)
    this.entries.set(key, { source, upstream })
    return upstream
  }

  private singleUse (key: string, source: S): Upstream {
    const settings = this.derive(source)
    const { passive } = settings.health
    // One request: nothing for a breaker or an outlier comparison to learn (whose timer nobody would stop), and no
    // breaker of the removed upstream to share with.
    return new SingleUseUpstream({ ...settings, health: passive === undefined ? {} : { passive }, circuit_breaker: undefined, outlier_ejection: undefined }, this.logger, key)
  }

  /** Closes every connection of every upstream, draining ones included (shutdown). */
  async close (): Promise<void> {
    const upstreams = [...this.entries.values()].map((entry) => entry.upstream).concat([...this.draining])
    this.entries.clear()
    this.draining.clear()
    await Promise.all(upstreams.map((upstream) => upstream.close()))
  }
}

/**
 * A store lane as an upstream: one target (its `base_url`), `max_sockets` connections, its timeouts (a body silent
 * for `response_timeout_ms` is cut too), its credential. No retry (there is no other target) and no health checks;
 * the live proxy's circuit breaker when `services.live.circuit_breaker` is set (declared-lanes.ts).
 */
export function laneUpstreamSettings (lane: DeclaredLane): UpstreamSettings {
  const settings = singleTargetSettings(lane.base_url, {
    label: 'The lane software',
    max_sockets: lane.max_sockets,
    timeouts: { connect_ms: lane.connect_timeout_ms, response_ms: lane.response_timeout_ms, body_idle_ms: lane.response_timeout_ms },
    credential: lane.credential,
    tls: lane.tls,
  })
  return lane.circuit_breaker === undefined ? settings : { ...settings, circuit_breaker: lane.circuit_breaker }
}

/**
 * The upstreams every service shares, opened with the shared resources and closed at shutdown: `lanes` by store
 * id (the live relay and fan-out's lane calls share each lane's pool, so fan-out honours the lane's socket cap),
 * declared by each snapshot (`declaredLanes`) and built at their first use; `services` for single upstreams keyed
 * by the service that owns their settings (`timeseries`), built on first use and kept; and `proxies` for the
 * `type: proxy` blocks, keyed by block name (`<block>/<group>` for each group of `upstreams:`), declared and built by each snapshot. A declared registry's upstreams
 * are reconciled and retired with the config (`UpstreamRegistry.reconcile`), not with traffic.
 */
export interface SharedUpstreams {
  readonly lanes: UpstreamRegistry<DeclaredLane>
  readonly services: UpstreamRegistry<UpstreamSettings>
  readonly proxies: UpstreamRegistry<UpstreamSettings>
  close (): Promise<void>
}

export function createSharedUpstreams (logger?: UpstreamLogger): SharedUpstreams {
  // A lane has no health checks and there may be many stores: its pool is made when the store is first used.
  const lanes = new UpstreamRegistry<DeclaredLane>(laneUpstreamSettings, logger, { build: 'on_first_use' })
  const services = new UpstreamRegistry<UpstreamSettings>((settings) => settings, logger)
  const proxies = new UpstreamRegistry<UpstreamSettings>((settings) => settings, logger)
  return {
    lanes,
    services,
    proxies,
    async close () {
      await Promise.all([lanes.close(), services.close(), proxies.close()])
    },
  }
}
