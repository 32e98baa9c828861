import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import { asPromMetric, CounterFamily, HistogramFamily, type CounterCell, type HistogramCell } from './series.js'
import { WebSocketMetrics } from './websocket-metrics.js'

/** How one call to an upstream (a lane, a proxied service) ended. */
export type UpstreamOutcome = 'ok' | 'http_4xx' | 'http_5xx' | 'unreachable' | 'timeout' | 'tls' | 'circuit_open'

/** Latency buckets in seconds: a cached-token GET is well under a millisecond, a lane call up to its timeout. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Buckets of long-lived answers in seconds: from a stream cut at once up to an hour. */
export const STREAM_BUCKETS = [0.1, 1, 10, 60, 300, 1800, 3600]

/** The series of one route: its latency histogram cells (requests, long-lived answers) and its counters by method and status. */
export class RouteSeries {
  readonly #byMethod = new Map<string, Map<number, CounterCell>>()
  // The cell of the last method and status recorded: a route answers the same way request after request, and two
  // comparisons are cheaper than the two map lookups.
  #lastMethod = ''
  #lastStatus = 0
  #lastCell: CounterCell | undefined

  constructor (
    private readonly requests: CounterFamily,
    private readonly durations: HistogramFamily,
    private readonly service: string,
    private readonly route: string,
    private readonly streams?: HistogramFamily,
    private readonly duration: HistogramCell = durations.cell(service, route),
  ) {}

  /**
   * Counts one answered request; `ms` is fastify's `reply.elapsedTime`. A long-lived answer (long-lived.ts) is
   * timed in the streams histogram instead of request latency.
   */
  record (method: string, status: number, ms: number, longLived = false): void {
    const last = this.#lastCell
    const cell = last !== undefined && method === this.#lastMethod && status === this.#lastStatus ? last : this.#cellOf(method, status)
    cell.value++
    if (longLived && this.streams !== undefined) this.streams.observe(this.streams.cell(this.service, this.route), ms / 1000)
    else this.durations.observe(this.duration, ms / 1000)
  }

  /** The counter cell of a method and status (made on first use), remembered as the last one. */
  #cellOf (method: string, status: number): CounterCell {
    let byStatus = this.#byMethod.get(method)
    if (byStatus === undefined) {
      byStatus = new Map()
      this.#byMethod.set(method, byStatus)
    }
    let cell = byStatus.get(status)
    if (cell === undefined) {
      cell = this.requests.cell(this.service, this.route, method, String(status))
      byStatus.set(status, cell)
    }
    this.#lastMethod = method
    this.#lastStatus = status
    this.#lastCell = cell
    return cell
  }
}

/** Values read when /metrics is scraped (the config version, the dependencies' last known state). */
export interface MetricSources {
  configVersion (): number
  /** dependency name → up (1) or down (0), checked at scrape time. */
  dependencies (): Promise<Record<string, boolean>>
  /** The `proxy` blocks' upstreams now: targets the health checks leave in and those they have ejected. */
  upstreamTargets? (): Iterable<UpstreamTargetCount>
  /** The circuit breakers of the `proxy` blocks' targets now (only upstreams that configure one). */
  upstreamCircuits? (): Iterable<UpstreamCircuitState>
  /** Log lines the process's log destination dropped so far (it was backed up); absent: 0. */
  logLinesDropped? (): number
}

/** One upstream's targets by health state, as `lanegate_upstream_targets` exports them. */
export interface UpstreamTargetCount {
  /** The registry key (a `proxy` block's name), the same `upstream` label as lanegate_upstream_requests_total. */
  readonly upstream: string
  readonly available: number
  readonly ejected: number
}

/** One target's circuit breaker, as `lanegate_upstream_circuit_state` exports it. */
export interface UpstreamCircuitState {
  /** The registry key (a `proxy` block's name). */
  readonly service: string
  /** The target's URL as configured. */
  readonly target: string
  /** 0 closed, 1 half-open, 2 open. */
  readonly state: number
}

/**
 * The gateway's Prometheus metrics in their own registry (not prom-client's global one: tests boot several
 * gateways in one process). Labels are bounded: service and route ids from gateway.yaml, never raw paths;
 * client ids only on the token endpoint's counter. Request series are found once per route, method and status
 * and then incremented in place (see series.ts), so a request costs a few Map lookups and additions.
 */
export class GatewayMetrics {
  readonly registry = new Registry()
  readonly requests = new CounterFamily('lanegate_http_requests_total', 'Requests answered, by service, route id, method and status.', ['service', 'route', 'method', 'status'])
  readonly durations = new HistogramFamily('lanegate_http_request_duration_seconds', 'Time from request start to the end of the answer (long-lived answers are in lanegate_http_stream_duration_seconds).', ['service', 'route'], LATENCY_BUCKETS)
  readonly streamDurations = new HistogramFamily('lanegate_http_stream_duration_seconds', 'Time from request start to the end of a long-lived answer: an event stream, a WebSocket, a fan-out preview or commit.', ['service', 'route'], STREAM_BUCKETS)
  readonly upstreamRequests = new CounterFamily('lanegate_upstream_requests_total', 'Calls to upstreams (lane store ids, proxied services) by outcome.', ['upstream', 'outcome'])
  readonly upstreamDurations = new HistogramFamily('lanegate_upstream_duration_seconds', 'Time until an upstream answered or failed.', ['upstream'], LATENCY_BUCKETS)
  readonly rateLimited = new CounterFamily('lanegate_rate_limited_total', 'Requests refused with 429, by the limit that refused them.', ['limit'])
  readonly authRefusals = new CounterFamily('lanegate_auth_refusals_total', 'Requests refused with 401 or 403, by service and error code.', ['service', 'code'])
  readonly tokensIssued = new CounterFamily('lanegate_tokens_issued_total', 'Access tokens issued, by client id.', ['client_id'])
  readonly tokenErrors = new CounterFamily('lanegate_token_errors_total', 'Token endpoint refusals, by OAuth error code.', ['error'])
  readonly configReloads = new CounterFamily('lanegate_config_reloads_total', 'Config reloads by result (applied, unchanged, rejected).', ['result'])
  readonly fanoutDispatches = new CounterFamily('lanegate_fanout_dispatches_total', 'Fan-out dispatches that settled, by final status.', ['status'])
  /**
   * Refusals (401, 403, 429) of requests a service token authenticated, by client id and status: for the console
   * only, not exported to /metrics (client ids stay off the request series). Counted where the refusal is
   * rendered, so a request that passes costs nothing.
   */
  readonly clientRefusals = new CounterFamily('lanegate_console_client_refusals', 'Refusals by service-account client id and status (console only).', ['client_id', 'status'])
  /** Certificate name (`listener`) → its not-after time in seconds since the epoch. */
  readonly certificateExpiry = new Map<string, number>()
  /** Open WebSockets, their messages and closes (websocket-metrics.ts). */
  readonly websockets = new WebSocketMetrics(this.registry)
  readonly upstreamRetries = new CounterFamily('lanegate_upstream_retries_total', 'Retries of upstream requests on another target, by result: sent, or over_budget (not sent: retry.budget spent).', ['upstream', 'result'])
  readonly upstreamGroupRequests = new CounterFamily('lanegate_upstream_group_requests_total', 'Requests of a proxy service (or the live proxy) by the target group its split chose.', ['service', 'group'])
  readonly upstreamMirrors = new CounterFamily('lanegate_upstream_mirror_requests_total', 'Request copies of a proxy service to its mirror group, by result: sent, dropped_body_too_large, dropped_in_flight.', ['service', 'result'])
  readonly ejections = new CounterFamily('lanegate_upstream_ejections_total', 'Upstream targets ejected, by service, target and reason (outlier: its failure rate stood far above its siblings\').', ['service', 'target', 'reason'])
  readonly circuitTransitions = new CounterFamily('lanegate_upstream_circuit_transitions_total', 'Circuit breaker state changes of upstream targets, by service, target and the state entered (open, half_open, closed).', ['service', 'target', 'to'])
  readonly accessLogDropped = new CounterFamily('lanegate_access_log_dropped_total', 'Access lines dropped because the sink was backed up or failing, by sink (its name, else its type).', ['sink'])
  readonly tracesDropped = new CounterFamily('lanegate_traces_dropped_total', 'Finished spans dropped: the export queue was full, or their export failed (collector down, slow, refusing).', [])
  /**
   * Following the fleet's config store: the version this process applied, as one series of value 1 (a label
   * change per apply). Under `server.workers` the primary keeps the max per series: workers on different
   * versions show as several series.
   */
  readonly configStoreVersion = new Gauge({
    name: 'lanegate_config_store_version',
    help: 'The config store version this process serves (value 1), by version and SHA-256 of its text.',
    labelNames: ['version', 'sha256'],
    registers: [this.registry],
    aggregator: 'max',
  })
  readonly configStoreRefused = new Counter({
    name: 'lanegate_config_store_refused_total',
    help: 'Config store versions refused on this host (valid, but not applicable here: a file, plugin or variable missing).',
    registers: [this.registry],
  })
  readonly cacheLookups = new CounterFamily('lanegate_cache_lookups_total', 'GET/HEAD answers of routes with the cache policy, by service, route id and result (hit, miss).', ['service', 'route', 'result'])
  readonly #routes = new Map<string, Map<string, RouteSeries>>()
  readonly #upstreams = new Map<string, { outcomes: Map<UpstreamOutcome, CounterCell>, duration: HistogramCell }>()

  constructor (sources: MetricSources) {
    for (const family of [this.requests, this.durations, this.streamDurations, this.upstreamRequests, this.upstreamDurations, this.rateLimited,
      this.authRefusals, this.tokensIssued, this.tokenErrors, this.configReloads, this.fanoutDispatches, this.cacheLookups, this.circuitTransitions, this.upstreamRetries, this.upstreamGroupRequests, this.upstreamMirrors, this.ejections,
      this.accessLogDropped, this.tracesDropped]) {
      this.registry.registerMetric(asPromMetric(family))
    }
    new Gauge({
      name: 'lanegate_config_version',
      help: 'Version of the config snapshot in use (1 at start, +1 per applied reload).',
      registers: [this.registry],
      // With server.workers > 1 the primary reports the newest version a worker serves: versions count per
      // process, so a restarted worker (back at 1, on the current file) must not pull the gauge down.
      aggregator: 'max',
      collect () { this.set(sources.configVersion()) },
    })
    new Gauge({
      name: 'lanegate_dependency_up',
      help: 'Whether a dependency answered its check at scrape time (1) or not (0).',
      labelNames: ['dependency'],
      registers: [this.registry],
      // With server.workers > 1: down (0) as soon as one worker finds the dependency down.
      aggregator: 'min',
      async collect () {
        for (const [dependency, up] of Object.entries(await sources.dependencies())) this.set({ dependency }, up ? 1 : 0)
      },
    })
    const upstreamTargets = sources.upstreamTargets
    new Gauge({
      name: 'lanegate_upstream_targets',
      help: 'Targets of each proxy service upstream at scrape time, by state (available, or ejected by health checks).',
      labelNames: ['upstream', 'state'],
      registers: [this.registry],
      collect () {
        // Rebuilt on every scrape: a block removed by a reload disappears with its upstream.
        this.reset()
        for (const count of upstreamTargets?.() ?? []) {
          this.set({ upstream: count.upstream, state: 'available' }, count.available)
          this.set({ upstream: count.upstream, state: 'ejected' }, count.ejected)
        }
      },
    })
    const upstreamCircuits = sources.upstreamCircuits
    new Gauge({
      name: 'lanegate_upstream_circuit_state',
      help: 'Circuit breaker state of each proxy service target at scrape time: 0 closed, 1 half-open, 2 open.',
      labelNames: ['service', 'target'],
      registers: [this.registry],
      // With server.workers > 1: the most open state a worker reports (workers share openings and closings).
      aggregator: 'max',
      collect () {
        this.reset()
        for (const circuit of upstreamCircuits?.() ?? []) this.set({ service: circuit.service, target: circuit.target }, circuit.state)
      },
    })
    new Counter({
      name: 'lanegate_log_lines_dropped_total',
      help: 'Log lines dropped because the log destination (stdout) was backed up (its reader lagged).',
      registers: [this.registry],
      // Read from the destination's own count at scrape time: dropping a line costs nothing more.
      collect () {
        this.reset()
        this.inc(sources.logLinesDropped?.() ?? 0)
      },
    })
    const expiry = this.certificateExpiry
    new Gauge({
      name: 'lanegate_tls_certificate_expiry_timestamp_seconds',
      help: 'Not-after time of the TLS certificate in use (listener: the one new handshakes get), seconds since the epoch.',
      labelNames: ['certificate'],
      registers: [this.registry],
      // With server.workers > 1: the soonest, so a worker that kept an old pair is not hidden.
      aggregator: 'min',
      collect () {
        for (const [certificate, seconds] of expiry) this.set({ certificate }, seconds)
      },
    })
    collectDefaultMetrics({ register: this.registry })
  }

  /** The series of one route (kept: the second request of a route finds it with two Map lookups). */
  route (service: string, route: string): RouteSeries {
    let routes = this.#routes.get(service)
    if (routes === undefined) {
      routes = new Map()
      this.#routes.set(service, routes)
    }
    let series = routes.get(route)
    if (series === undefined) {
      series = new RouteSeries(this.requests, this.durations, service, route, this.streamDurations)
      routes.set(route, series)
    }
    return series
  }

  /** One upstream call's outcome and duration in seconds. */
  upstream (upstream: string, outcome: UpstreamOutcome, seconds: number): void {
    let known = this.#upstreams.get(upstream)
    if (known === undefined) {
      known = { outcomes: new Map(), duration: this.upstreamDurations.cell(upstream) }
      this.#upstreams.set(upstream, known)
    }
    let cell = known.outcomes.get(outcome)
    if (cell === undefined) {
      cell = this.upstreamRequests.cell(upstream, outcome)
      known.outcomes.set(outcome, cell)
    }
    cell.value++
    this.upstreamDurations.observe(known.duration, seconds)
  }
}
