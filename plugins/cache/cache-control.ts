/** What the cache reads of a backend answer's `Cache-Control`. */
export interface Directives {
  noStore: boolean
  private: boolean
  noCache: boolean
  maxAge: number | undefined
  sMaxAge: number | undefined
}

/** Parses a `Cache-Control` value (RFC 9111 §5.2): names case-insensitive, `max-age=N` or `max-age="N"`. */
export function parseCacheControl (value: string | number | string[] | undefined): Directives {
  const directives: Directives = { noStore: false, private: false, noCache: false, maxAge: undefined, sMaxAge: undefined }
  if (value === undefined) return directives
  for (const part of (Array.isArray(value) ? value.join(',') : String(value)).split(',')) {
    const eq = part.indexOf('=')
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase()
    const argument = eq === -1 ? undefined : part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1')
    if (name === 'no-store') directives.noStore = true
    else if (name === 'private') directives.private = true
    else if (name === 'no-cache') directives.noCache = true
    else if (name === 'max-age') directives.maxAge = seconds(argument)
    else if (name === 's-maxage') directives.sMaxAge = seconds(argument)
  }
  return directives
}

/** A delta-seconds argument; a malformed one counts as 0 (stale at once), as RFC 9111 §1.2.2 asks. */
function seconds (argument: string | undefined): number {
  return argument !== undefined && /^\d+$/.test(argument) ? Number(argument) : 0
}

/**
 * How long (ms) an answer may be served from this shared cache: 0 when it must not be stored (`no-store`,
 * `private`, `no-cache`, a zero age); else `s-maxage`, else `max-age`, else `ttlSeconds`, never more than it.
 */
export function freshnessMs (directives: Directives, ttlSeconds: number): number {
  if (directives.noStore || directives.private || directives.noCache) return 0
  const backend = directives.sMaxAge ?? directives.maxAge
  return Math.min(ttlSeconds, backend ?? ttlSeconds) * 1000
}
