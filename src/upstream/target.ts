import { Pool } from 'undici'
import { BackendTlsConnector, type BackendTlsOptions } from './backend-tls.js'
import type { CircuitBreaker } from './circuit-breaker.js'
import type { OutlierCounts } from './outlier-counts.js'
import type { UpstreamSettings, UpstreamTarget } from './settings.js'

/**
 * One target of an upstream: its own undici connection pool (`connections` = `max_sockets`, so a hung target
 * fills only its own sockets; keep-alive between requests), the requests it has in flight, and its health.
 *
 * Health: `failures` transport failures in a row (passive) set `ejectedUntil`; once that time has passed the target
 * is picked again on probation (one more failure ejects it again, a success clears it). A failing active probe sets
 * `probeDown` until a probe succeeds. A target with neither never reads the clock when picked.
 */
export class Target {
  readonly url: string
  /** `host[:port]`, sent as the Host header. */
  readonly host: string
  /** The URL's path without its trailing slash (`''` for none), prefixed to every request path. */
  readonly basePath: string
  weight: number
  readonly pool: Pool
  /** Requests dispatched and not finished (least_connections). */
  inFlight = 0
  /** Smooth weighted round robin's running weight. */
  current = 0
  /** Set by a failing active probe, cleared by a passing one. */
  probeDown = false
  /** The last active probe: when, whether it passed, and what it got (a status, or the failure). */
  lastProbe: { at: number, ok: boolean, detail: string } | undefined
  /** Its circuit breaker (upstream.ts sets it), or undefined when the upstream configures none. */
  breaker: CircuitBreaker | undefined = undefined
  /** Its answers since the last outlier comparison (outlier-ejection.ts), or undefined when the upstream has none. */
  outcomes: OutlierCounts | undefined = undefined
  /** Ejected as an outlier until then (ms since the epoch); 0 when not. */
  outlierUntil = 0
  private failures = 0
  private ejectedUntil = 0
  /** An https target's connector (the `tls:` settings' CA and client certificate, re-read when the files change). */
  private readonly tls: BackendTlsConnector | undefined

  constructor (target: UpstreamTarget, settings: UpstreamSettings, logger?: ConstructorParameters<typeof BackendTlsConnector>[2]) {
    const url = new URL(target.url)
    this.url = target.url
    this.host = url.host
    this.basePath = url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname
    this.weight = target.weight
    const { timeouts } = settings
    this.tls = url.protocol === 'https:' ? new BackendTlsConnector(settings.tls ?? {}, timeouts.connect_ms, logger) : undefined
    this.pool = new Pool(url.origin, {
      connections: settings.max_sockets,
      pipelining: 1,
      connect: this.tls?.connect ?? { timeout: timeouts.connect_ms },
      // Backstops: the relay runs its own timer from the start of an attempt to the response head (queueing for a
      // connection included, a request body's upload not); once the head arrived and the request body was sent, a
      // body silent for body_idle_ms is cut off. undici's headers timer does not fire while a body is being written
      // (unless the target stops reading it) and restarts at the body's end.
      headersTimeout: timeouts.response_ms,
      bodyTimeout: timeouts.body_idle_ms,
    })
  }

  /**
   * `tls.connect` options for a connection to this target that its pool does not make (a WebSocket upgrade): the
   * upstream's `tls:` settings exactly as the pool uses them (files loaded last); undefined for an http target.
   * Throws (`ERR_TLS_FILES`, a `tls` failure) while the files have never loaded.
   */
  tlsOptions (): BackendTlsOptions | undefined {
    return this.tls?.connectOptions()
  }

  /** Whether the balancer may pick this target now. */
  available (): boolean {
    if (this.probeDown) return false
    // One comparison when no breaker is configured.
    if (this.breaker !== undefined && !this.breaker.allows()) return false
    if (this.outlierUntil !== 0) {
      if (Date.now() < this.outlierUntil) return false
      this.outlierUntil = 0
    }
    if (this.ejectedUntil === 0) return true
    if (Date.now() < this.ejectedUntil) return false
    // Back on probation: the next failure ejects it again at once.
    this.ejectedUntil = 0
    this.failures = Number.MAX_SAFE_INTEGER - 1
    return true
  }

  /** Whether health checks have this target ejected right now (for logs and tests). */
  get ejected (): boolean {
    return this.probeDown || (this.ejectedUntil !== 0 && Date.now() < this.ejectedUntil) || (this.outlierUntil !== 0 && Date.now() < this.outlierUntil)
  }

  /**
   * Its health as the console shows it: `ejected` (health checks keep it out), `probation` (its ejection ran out:
   * the next failure ejects it again, a success clears it) or `healthy`. Reads state only.
   */
  get state (): 'healthy' | 'ejected' | 'probation' {
    if (this.ejected) return 'ejected'
    return this.ejectedUntil !== 0 || this.failures >= Number.MAX_SAFE_INTEGER - 1 ? 'probation' : 'healthy'
  }

  /** The target answered: its run of failures ends. */
  recordSuccess (): void {
    if (this.failures !== 0) this.failures = 0
  }

  /**
   * A transport failure (refused, reset, timeout…). Returns true when it ejected the target. Without passive
   * health configured nothing is counted.
   */
  recordFailure (passive: UpstreamSettings['health']['passive']): boolean {
    if (passive === undefined) return false
    this.failures = Math.min(this.failures + 1, Number.MAX_SAFE_INTEGER)
    if (this.failures < passive.failures) return false
    this.failures = 0
    this.ejectedUntil = Date.now() + passive.eject_seconds * 1000
    return true
  }

  /** A passing (true) or failing (false) active probe. */
  recordProbe (healthy: boolean, detail = healthy ? 'passed' : 'failed'): void {
    this.lastProbe = { at: Date.now(), ok: healthy, detail }
    this.probeDown = !healthy
    if (healthy) {
      this.failures = 0
      this.ejectedUntil = 0
    }
  }

  /** Stops taking requests: those in flight finish, then the connections close (resolves then; never rejects). */
  retire (): Promise<void> {
    this.tls?.close()
    return this.pool.close().catch(() => {})
  }

  /** Closes every connection now (shutdown). */
  async destroy (): Promise<void> {
    this.tls?.close()
    await this.pool.destroy().catch(() => {})
  }
}
