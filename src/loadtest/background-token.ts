import { TokenSource } from '../client/token-source.js'

export interface BackgroundTokenOptions {
  /** Gateway base URL; the token endpoint is <baseUrl>/oauth/token. */
  baseUrl: string
  clientId: string
  clientSecret: string
  scope?: string
  /** Refresh when fewer seconds than this remain (default: the client's 300, or half a shorter token's life). */
  refreshBeforeSeconds?: number
  /** Called when a background refresh fails (the old token stays in use; retried 5 s later). */
  onRefreshError?: (error: Error) => void
  /** The fetch of the token requests (`--cacert`: one that trusts a private CA); the global one by default. */
  fetch?: typeof globalThis.fetch
}

/**
 * Client-credentials tokens for a load test, from `lanegate/client`'s TokenSource (the same cache, refresh point
 * and token request an integrator gets). autocannon asks for a token synchronously on every request, so this
 * keeps the current one at hand and asks the source again in the background when it is due for refresh.
 */
export class BackgroundToken {
  readonly #source: TokenSource
  readonly #onRefreshError: ((error: Error) => void) | undefined
  #token = ''
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor (options: BackgroundTokenOptions) {
    this.#source = new TokenSource({
      tokenUrl: `${options.baseUrl.replace(/\/+$/, '')}/oauth/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...(options.refreshBeforeSeconds === undefined ? {} : { refreshBeforeSeconds: options.refreshBeforeSeconds }),
      userAgent: 'lanegate-loadtest',
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    })
    this.#onRefreshError = options.onRefreshError
  }

  /** Fetches the first token (throws a LanegateError from the token endpoint, or a network error) and schedules its refresh. */
  async start (): Promise<void> {
    this.#token = await this.#source.getToken()
    this.#schedule()
  }

  /** The token to send now. */
  current (): string {
    return this.#token
  }

  /** Tokens obtained after the first one. */
  get refreshes (): number {
    return Math.max(0, this.#source.tokensFetched - 1)
  }

  /** Stops refreshing. */
  stop (): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }

  #schedule (delayMs = Math.max(0, (this.#source.refreshAt() ?? Date.now()) - Date.now())): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      // refresh(), not getToken(): past the refresh point getToken() answers with the cached token at once and
      // refreshes in the background, and this timer would fire again and again until that refresh landed.
      this.#source.refresh().then((token) => {
        this.#token = token
        this.#schedule()
      }, (error: Error) => {
        this.#onRefreshError?.(error)
        this.#schedule(5000)
      })
    }, delayMs)
    this.#timer.unref()
  }
}
