import type { UpstreamHealth, UpstreamSettings } from './settings.js'
import { probeSharing, registerCheck, unregisterCheck, type ProbeResult, type SharedCheck } from './probe-sharing.js'
import type { Target } from './target.js'

/**
 * What the checks read of their upstream (the `Upstream` class fits): declared here rather than imported, so
 * upstream.ts → active-health.ts is the only import between the two (dependency-cruiser forbids cycles, type-only
 * ones included).
 */
export interface ProbedUpstream {
  readonly targets: readonly Target[]
  readonly settings: UpstreamSettings
  readonly logger?: { info (fields: object, message: string): void, warn (fields: object, message: string): void }
}

type ActiveSettings = NonNullable<UpstreamHealth['active']>

/**
 * Active health checks: every `interval_seconds`, GET `path` (below each target's base path) on every target of
 * the upstream, through the target's own pool. A 2xx or 3xx answer within the upstream's connect + response
 * timeouts marks the target healthy (clearing any passive ejection too); anything else ejects it until a probe
 * passes. Probes of one round run in parallel; a round still running when the next is due is not doubled.
 *
 * The first round runs at once, when the checks start (the upstream is built with the snapshot that declares
 * it): a target that is down at boot or reload is ejected before a request meets it, not one interval later.
 */
export class ActiveHealth implements SharedCheck {
  private readonly timer: NodeJS.Timeout
  private running = false
  private stopped = false

  constructor (private readonly upstream: ProbedUpstream, private readonly active: ActiveSettings) {
    this.timer = setInterval(() => { void this.round() }, active.interval_seconds * 1000)
    this.timer.unref()
    registerCheck(this)
    void this.round()
  }

  /** Whether these are the settings it runs with (a reload keeps the timer when they did not change). */
  sameAs (active: ActiveSettings | undefined): boolean {
    return active !== undefined && active.path === this.active.path && active.interval_seconds === this.active.interval_seconds
  }

  /** No more rounds; a probe still in flight is not recorded (its pool may be closing: that is not the target's fault). */
  stop (): void {
    this.stopped = true
    clearInterval(this.timer)
    unregisterCheck(this)
  }

  /** One round over the current targets; none where another process probes for this host (probe-sharing.ts). */
  async round (): Promise<void> {
    if (this.running || this.stopped || !probeSharing().probing) return
    this.running = true
    try {
      await Promise.all(this.upstream.targets.map((target) => this.probe(target)))
    } finally {
      this.running = false
    }
  }

  private async probe (target: Target): Promise<void> {
    const { timeouts } = this.upstream.settings
    let healthy = false
    let detail = ''
    try {
      const answer = await target.pool.request({
        path: target.basePath + this.active.path,
        method: 'GET',
        headers: { host: target.host },
        signal: AbortSignal.timeout(timeouts.connect_ms + timeouts.response_ms),
      })
      await answer.body.dump()
      healthy = answer.statusCode >= 200 && answer.statusCode < 400
      detail = `GET ${this.active.path} ${answer.statusCode}`
    } catch (error) {
      healthy = false
      detail = `GET ${this.active.path} failed: ${(error as { code?: string }).code ?? (error as Error).name}`
    }
    if (this.stopped) return
    this.record(target, healthy, detail)
    probeSharing().publish({ url: target.url, path: this.active.path, healthy })
  }

  /** The prober's result for one of this check's targets (another worker probed it). */
  applyShared (result: ProbeResult): void {
    if (this.stopped || result.path !== this.active.path) return
    const target = this.upstream.targets.find((t) => t.url === result.url)
    if (target !== undefined) this.record(target, result.healthy, `${result.healthy ? 'passed' : 'failed'} (probed by another worker)`)
  }

  private record (target: Target, healthy: boolean, detail: string): void {
    const wasDown = target.ejected
    target.recordProbe(healthy, detail)
    if (healthy === wasDown) {
      this.upstream.logger?.[healthy ? 'info' : 'warn']({ upstream_target: target.url }, healthy ? 'upstream target healthy again' : 'upstream target failed its health check')
    }
  }
}
