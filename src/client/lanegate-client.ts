import { systemClock, type Clock } from './clock.js'
import { ContentApi } from './content.js'
import { HostfileApi, ReportsApi, TimeseriesApi } from './exchange.js'
import { FanoutApi } from './fanout.js'
import { HttpCore } from './http-core.js'
import { LiveApi } from './live.js'
import { PaymentsApi } from './payments.js'
import { retrySettings, type RetryOptions } from './retry-policy.js'
import { TokenSource, type TokenSourceOptions } from './token-source.js'

/** Where each service is mounted (gateway.yaml `services.<name>.prefix`); the defaults are the demo's. */
export interface ServicePrefixes {
  payments: string
  content: string
  live: string
  timeseries: string
  reports: string
  fanout: string
  hostfile: string
}

export const defaultPrefixes: Readonly<ServicePrefixes> = Object.freeze({
  payments: '/api/v1/ecommerce',
  content: '/public/v1',
  live: '/v1/stores',
  timeseries: '/v1/hq',
  reports: '/v1/reports',
  fanout: '/v1/fanout',
  hostfile: '/v1/hostfile',
})

/** What a LanegateClient needs. Server-side use only: the secret must never reach a browser. */
export interface LanegateClientOptions {
  /** The gateway's base URL, e.g. `https://gateway.example`. */
  baseUrl: string
  /** The token endpoint (default `<baseUrl>/oauth/token`). */
  tokenUrl?: string
  clientId: string
  clientSecret: string
  /** Space-separated scopes to ask for (default: all the client may have). */
  scope?: string
  /** Refresh the token when fewer seconds than this remain (default 300; see TokenSource). */
  refreshBeforeSeconds?: number
  /**
   * Told when an early token refresh fails while the cached token is still valid (calls go on with that token,
   * the next attempt backs off); see TokenSource and docs/client.md. Without it such failures are silent.
   */
  onTokenRefreshError?: TokenSourceOptions['onTokenRefreshError']
  retry?: RetryOptions
  /** A fetch implementation (default: the global `fetch`). */
  fetch?: typeof globalThis.fetch
  userAgent?: string
  /** Service prefixes when your gateway.yaml differs from the demo's. */
  prefixes?: Partial<ServicePrefixes>
  /** Time source for waits (tests). */
  clock?: Clock
}

/**
 * A typed client of a lanegate gateway that follows the spec's client guidance: one token cache (refreshed
 * `refreshBeforeSeconds` before expiry, single flight; a failed refresh leaves calls on the still-valid token), a new token and one retry on 401, `Retry-After` on 429,
 * 1 s / 2 s / 4 s back-off on 5xx and network errors for idempotent requests, every other error thrown as a
 * LanegateError. See docs/client.md.
 */
export class LanegateClient {
  /** The token cache (also usable on its own, e.g. by `lanegate loadtest`). */
  readonly tokens: TokenSource
  readonly payments: PaymentsApi
  readonly content: ContentApi
  readonly live: LiveApi
  readonly timeseries: TimeseriesApi
  readonly reports: ReportsApi
  readonly fanout: FanoutApi
  readonly hostfile: HostfileApi

  constructor (options: LanegateClientOptions) {
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) throw new TypeError('baseUrl must be an http(s) URL')
    const baseUrl = options.baseUrl.replace(/\/+$/, '')
    const fetch = options.fetch ?? globalThis.fetch
    const clock = options.clock ?? systemClock
    const retry = retrySettings(options.retry)
    this.tokens = new TokenSource({
      tokenUrl: options.tokenUrl ?? `${baseUrl}/oauth/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      fetch,
      clock,
      retry,
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...(options.refreshBeforeSeconds === undefined ? {} : { refreshBeforeSeconds: options.refreshBeforeSeconds }),
      ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
      ...(options.onTokenRefreshError === undefined ? {} : { onTokenRefreshError: options.onTokenRefreshError }),
    })
    const core = new HttpCore({ baseUrl, tokens: this.tokens, fetch, clock, retry, ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }) })
    const prefixes = { ...defaultPrefixes, ...options.prefixes }
    this.payments = new PaymentsApi(core, prefixes.payments)
    this.content = new ContentApi(core, prefixes.content)
    this.live = new LiveApi(core, prefixes.live)
    this.timeseries = new TimeseriesApi(core, prefixes.timeseries)
    this.reports = new ReportsApi(core, prefixes.reports)
    this.fanout = new FanoutApi(core, prefixes.fanout)
    this.hostfile = new HostfileApi(core, prefixes.hostfile)
  }
}
