/**
 * The raw query without its `access_token` parameters (the bearer token a WebSocket route accepts there, RFC 6750
 * §2.3): the upstream never sees the caller's token. Every other parameter is kept byte for byte, in its order.
 */
export function withoutAccessToken (query: string): string {
  if (!query.includes('access_token')) return query
  return query.split('&').filter((part) => {
    const name = part.split('=', 1)[0] ?? ''
    let decoded = name
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '))
    } catch {
      // A malformed name is not `access_token`; it goes on as it came.
    }
    return decoded !== 'access_token'
  }).join('&')
}

/** The raw URL with `access_token` removed from its query (see withoutAccessToken). */
export function urlWithoutAccessToken (rawUrl: string): string {
  const q = rawUrl.indexOf('?')
  if (q === -1) return rawUrl
  const query = withoutAccessToken(rawUrl.slice(q + 1))
  return query === '' ? rawUrl.slice(0, q) : `${rawUrl.slice(0, q)}?${query}`
}
