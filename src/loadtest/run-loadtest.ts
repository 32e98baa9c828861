import { readFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { fetchTrusting } from './trusted-fetch.js'
import { loadGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import type { GatewayConfig } from '../config/types.js'
import type { LoadtestOptions } from './options.js'
import { RateLimitTally, type RateLimitHit } from './rate-limit-tally.js'
import { BackgroundToken } from './background-token.js'

/** Where a run stands, once a second. */
export interface LoadtestProgress {
  elapsedSeconds: number
  durationSeconds: number
  requests: number
  /** Responses in the last second. */
  currentRps: number
  statusCounts: Record<string, number>
  errors: number
}

/** The outcome of a run. Latencies are in milliseconds, from every response's own time. */
export interface LoadtestSummary {
  url: string
  method: string
  connections: number
  durationSeconds: number
  requests: number
  rps: number
  latencyMs: { p50: number, p90: number, p99: number, max: number, mean: number }
  statusCounts: Record<string, number>
  errors: number
  timeouts: number
  /** 429s by the limit that produced them. */
  rateLimited: RateLimitHit[]
  /** Tokens obtained after the first (the run outlived a token). */
  tokenRefreshes: number
}

export interface LoadtestHooks {
  /** Called once a second while the run lasts. */
  onProgress?: (progress: LoadtestProgress) => void
  /** Called when a background token refresh fails (the run goes on with the old token). */
  onWarning?: (message: string) => void
  /** Seconds before expiry to refresh the token (tests); see BackgroundToken. */
  refreshBeforeSeconds?: number
}

/** The gateway base URL: --url, else the config's issuer.issuer (the URL clients reach by definition). */
function baseUrlOf (options: LoadtestOptions, config: GatewayConfig | undefined): string {
  if (options.url !== undefined) return options.url
  if (config === undefined) throw new Error('give --url or --config (its issuer.issuer is the gateway\'s base URL)')
  return config.issuer.issuer.replace(/\/+$/, '')
}

function percentile (sorted: Float64Array, q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1]
}

/**
 * Runs a load test of one gateway route with a real client-credentials token (see `lanegate loadtest`). Throws
 * when the config cannot be read or the first token cannot be obtained (a LanegateError from `lanegate/client` carries the answer).
 *
 * Long by design: one sequence (config, body, token source, the autocannon run, the summary) whose steps share
 * the run's state.
 */
export async function runLoadtest (options: LoadtestOptions, hooks: LoadtestHooks = {}): Promise<LoadtestSummary> {
  const config = options.config === undefined ? undefined : (await loadGatewayConfig(options.config)).config
  const baseUrl = baseUrlOf(options, config)
  const body = options.bodyFile === undefined ? undefined : await readFile(options.bodyFile)
  const tokens = new BackgroundToken({
    baseUrl,
    ...(options.cacert === undefined ? {} : { fetch: await fetchTrusting(options.cacert) }),
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    ...(hooks.refreshBeforeSeconds === undefined ? {} : { refreshBeforeSeconds: hooks.refreshBeforeSeconds }),
    onRefreshError: (error) => hooks.onWarning?.(`token refresh failed, retrying in 5 s: ${error.message}`),
  })
  await tokens.start()

  const tally = new RateLimitTally(config, options.path)
  const statusCounts: Record<string, number> = {}
  let latencies = new Float64Array(1 << 16)
  let count = 0
  let errors = 0
  let timeouts = 0
  const baseHeaders: Record<string, string> = body === undefined ? {} : { 'content-type': options.contentType }
  const url = baseUrl + options.path
  const started = performance.now()
  try {
    await new Promise<void>((resolve, reject) => {
      const instance = autocannon({
        url,
        connections: options.connections,
        duration: options.durationSeconds,
        requests: [{
          method: options.method as autocannon.Request['method'],
          path: new URL(url).pathname + new URL(url).search,
          ...(body === undefined ? {} : { body }),
          // Every request takes the current token, so a refresh applies at once on every connection.
          setupRequest: function withToken (request) {
            request.headers = { ...baseHeaders, authorization: `Bearer ${tokens.current()}` }
            return request
          },
          onResponse: function tally429 (status, responseBody, _context, headers) {
            if (status === 429) tally.record(headers as Record<string, unknown>, responseBody)
          },
        }],
      }, (error) => error === null || error === undefined ? resolve() : reject(error))
      let lastCount = 0
      const ticker = setInterval(() => {
        hooks.onProgress?.({
          elapsedSeconds: (performance.now() - started) / 1000,
          durationSeconds: options.durationSeconds,
          requests: count,
          currentRps: count - lastCount,
          statusCounts: { ...statusCounts },
          errors,
        })
        lastCount = count
      }, 1000)
      instance.on('done', () => clearInterval(ticker))
      instance.on('response', function record (_client, status, _bytes, responseTime) {
        if (count === latencies.length) {
          const grown = new Float64Array(latencies.length * 2)
          grown.set(latencies)
          latencies = grown
        }
        latencies[count++] = responseTime
        statusCounts[status] = (statusCounts[status] ?? 0) + 1
      })
      instance.on('reqError', function countError (error: Error) {
        errors++
        if (error.message === 'request timed out') timeouts++
      })
    })
  } finally {
    tokens.stop()
  }
  const seconds = (performance.now() - started) / 1000
  const sorted = latencies.slice(0, count).sort()
  let total = 0
  for (const v of sorted) total += v
  return {
    url,
    method: options.method,
    connections: options.connections,
    durationSeconds: seconds,
    requests: count,
    rps: count / seconds,
    latencyMs: { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99), max: percentile(sorted, 1), mean: count === 0 ? Number.NaN : total / count },
    statusCounts,
    errors,
    timeouts,
    rateLimited: tally.result(),
    tokenRefreshes: tokens.refreshes,
  }
}
