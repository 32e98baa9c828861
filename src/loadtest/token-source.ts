/** The fields of a token endpoint answer this uses. */
interface TokenAnswer {
  access_token: string
  expires_in: number
}

/** The token endpoint refused or failed: carries its status and body so the CLI can show them. */
export class TokenRequestError extends Error {
  constructor (readonly status: number, readonly body: string) {
    super(`the token endpoint answered ${status}: ${body}`)
  }
}

export interface TokenSourceOptions {
  /** Gateway base URL; the token endpoint is <baseUrl>/oauth/token. */
  baseUrl: string
  clientId: string
  clientSecret: string
  scope?: string
  /**
   * Refresh this many seconds before expiry (default: a tenth of the lifetime, at most 60 s), so requests in
   * flight never carry an expired token.
   */
  refreshMarginSeconds?: number
  /** Called when a background refresh fails (the old token stays in use; retried 5 s later). */
  onRefreshError?: (error: Error) => void
}

/**
 * Client-credentials tokens for a load test: one is fetched up front, then refreshed in the background before
 * it expires, so a run longer than a token's life keeps sending valid tokens. `current()` is synchronous.
 */
export class TokenSource {
  private token = ''
  private timer?: NodeJS.Timeout
  /** Tokens obtained after the first one. */
  refreshes = 0

  constructor (private readonly options: TokenSourceOptions) {}

  /** Fetches the first token (throws TokenRequestError or a network error) and schedules its refresh. */
  async start (): Promise<void> {
    await this.fetchAndSchedule()
  }

  /** The token to send now. */
  current (): string {
    return this.token
  }

  /** Stops refreshing. */
  stop (): void {
    clearTimeout(this.timer)
  }

  private async fetchAndSchedule (): Promise<void> {
    const answer = await this.fetchToken()
    this.token = answer.access_token
    const margin = this.options.refreshMarginSeconds ?? Math.min(60, answer.expires_in / 10)
    this.schedule(Math.max(1, answer.expires_in - margin) * 1000)
  }

  private schedule (ms: number): void {
    this.timer = setTimeout(() => {
      this.fetchAndSchedule().then(() => { this.refreshes++ }, (error: Error) => {
        this.options.onRefreshError?.(error)
        this.schedule(5000)
      })
    }, ms)
    this.timer.unref()
  }

  private async fetchToken (): Promise<TokenAnswer> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.options.clientId, client_secret: this.options.clientSecret })
    if (this.options.scope !== undefined) form.set('scope', this.options.scope)
    const response = await fetch(`${this.options.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    })
    const text = await response.text()
    if (response.status !== 200) throw new TokenRequestError(response.status, text)
    const answer = JSON.parse(text) as TokenAnswer
    if (typeof answer.access_token !== 'string' || typeof answer.expires_in !== 'number') {
      throw new TokenRequestError(response.status, `no access_token/expires_in in ${text}`)
    }
    return answer
  }
}
