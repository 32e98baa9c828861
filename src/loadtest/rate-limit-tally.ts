import { routePolicies, type GatewayConfig, type PolicyEntry } from '../config/types.js'

/** 429s grouped by the limit that produced them. */
export interface RateLimitHit {
  /** The `X-RateLimit-Limit` of the 429 (absent when the answer had none). */
  limit?: string
  /** The error the body carried (`error`, and `message`/`error_description` when present). */
  error?: string
  /** Names of the configured limits with that many points (from --config), e.g. ["content-per-client"]. */
  names: string[]
  count: number
}

function headerValue (headers: Record<string, unknown>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? String(value[0]) : String(value)
  }
  return undefined
}

function bodyError (body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>
    const parts = [parsed.error, parsed.message ?? parsed.error_description].filter((p) => typeof p === 'string')
    return parts.length === 0 ? undefined : parts.join(': ')
  } catch {
    return undefined
  }
}

/** Names of the limits the `rate-limit` policies of the service serving `path` use (empty when none is known). */
function limitsOnPath (config: GatewayConfig, path: string): Set<string> {
  const names = new Set<string>()
  const pathname = path.split('?')[0]
  for (const service of Object.values(config.services)) {
    const prefix = service.prefix.replace(/\/+$/, '')
    if (pathname !== prefix && !pathname.startsWith(`${prefix}/`)) continue
    const entries: PolicyEntry[] = [...service.policies, ...Object.values(service.routes).flatMap(routePolicies)]
    for (const entry of entries) {
      const options = entry['rate-limit'] as { limit?: unknown } | undefined
      if (typeof options?.limit === 'string') names.add(options.limit)
    }
  }
  return names
}

/**
 * Counts 429 answers by (limit, error). The gateway says which limit refused a request only through the
 * `X-RateLimit-Limit` it sends with the 429 and the body; with the config at hand the points are matched back
 * to the names of the limits that have that many (`rate_limits.*`, `issuer.token_rate_limit`), preferring the
 * limits the service serving the path actually uses.
 */
export class RateLimitTally {
  private readonly hits = new Map<string, RateLimitHit>()
  private readonly onPath: Set<string>

  /** `path` is the request path load-tested (narrows the names to its service's limits). */
  constructor (private readonly config?: GatewayConfig, path = '') {
    this.onPath = config === undefined ? new Set() : limitsOnPath(config, path)
  }

  /** Records one 429 answer. */
  record (headers: Record<string, unknown>, body: string): void {
    const limit = headerValue(headers, 'x-ratelimit-limit')
    const error = bodyError(body)
    const key = `${limit ?? ''}\0${error ?? ''}`
    let hit = this.hits.get(key)
    if (hit === undefined) {
      hit = { ...(limit === undefined ? {} : { limit }), ...(error === undefined ? {} : { error }), names: this.namesFor(limit), count: 0 }
      this.hits.set(key, hit)
    }
    hit.count++
  }

  private namesFor (limit: string | undefined): string[] {
    if (limit === undefined || this.config === undefined) return []
    const points = Number(limit)
    let matching = Object.entries(this.config.rate_limits).filter(([, l]) => l.points === points)
    const used = matching.filter(([name]) => this.onPath.has(name))
    if (used.length > 0) matching = used
    const names = matching.map(([name, l]) => `${name} (${l.points}/${l.window_seconds}s per ${l.key})`)
    const token = this.config.issuer.token_rate_limit
    if (used.length === 0 && token.points === points) names.push(`issuer.token_rate_limit (${token.points}/${token.window_seconds}s per client)`)
    return names
  }

  /** The tallies, most frequent first. */
  result (): RateLimitHit[] {
    return [...this.hits.values()].sort((a, b) => b.count - a.count)
  }
}
