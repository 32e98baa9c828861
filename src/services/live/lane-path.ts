import { GatewayError } from '../../plugin/gateway-error.js'

/**
 * Characters forwarded literally in a path segment: RFC 3986 unreserved plus the sub-delims and `:`/`@` that
 * pchar allows, minus `;` (path parameters, the `/..;/` trick). Everything else is percent-encoded again.
 */
const SAFE_CHARACTERS = "A-Za-z0-9\\-._~!$&'()*+,=:@"
const SEGMENT_SAFE = new RegExp(`^[${SAFE_CHARACTERS}]$`)
/** A segment of safe characters only (no `%`): decoding and encoding it again give it back unchanged. */
const PLAIN_SEGMENT = new RegExp(`^[${SAFE_CHARACTERS}]+$`)
/** A whole remainder of plain segments (none empty), with or without a trailing `/`: canonical as it stands. */
const PLAIN_PATH = new RegExp(`^[${SAFE_CHARACTERS}]+(?:/[${SAFE_CHARACTERS}]+)*/?$`)
/** A `.` or `..` segment anywhere in a remainder. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/
/** Control characters, `/`, `\`, `;` and `%` must not appear in a segment once decoded. */
const DECODED_FORBIDDEN = /[\u0000-\u001f\u007f/\\;%]/

function badPath (reason: string, subject = 'lane path'): GatewayError {
  return new GatewayError('bad_request', { message: `The ${subject} is not accepted: ${reason}.` })
}

/**
 * Checks the part of the request path below `/<store>/live/` (or below a proxy service's prefix; `subject` names
 * it in the message) raw, as the client sent it, and returns it in a canonical form safe to append to the
 * upstream's base path. The path is decoded exactly once, per segment; anything
 * that could climb out of the store's lane prefix or mean something else to a server that decodes again is
 * refused with 400: `.`/`..` segments (raw or encoded), encoded `/` or `\`, backslashes, NUL and control bytes,
 * `;` path parameters, `%` surviving one decode (double encoding) and empty segments (`//`). A trailing `/` is
 * kept.
 */
export function canonicalLanePath (rawRemainder: string, subject = 'lane path'): string {
  if (rawRemainder === '') return ''
  // The common case (`api/items/000123`), checked whole: nothing to decode or encode, so no split and no join.
  if (PLAIN_PATH.test(rawRemainder) && !DOT_SEGMENT.test(rawRemainder)) return rawRemainder
  if (rawRemainder.includes('\\')) throw badPath('backslashes are not allowed', subject)
  const segments = rawRemainder.split('/')
  const trailingSlash = segments.length > 1 && segments[segments.length - 1] === ''
  if (trailingSlash) segments.pop()
  const out: string[] = []
  for (const raw of segments) {
    if (raw === '') throw badPath('empty path segments are not allowed', subject)
    // The common case (`api/items/000123`): nothing to decode, nothing to encode; only dot segments to refuse.
    if (PLAIN_SEGMENT.test(raw)) {
      if (raw === '.' || raw === '..') throw badPath('dot segments are not allowed', subject)
      out.push(raw)
      continue
    }
    let decoded: string
    try {
      decoded = decodeURIComponent(raw)
    } catch {
      throw badPath('malformed percent-encoding', subject)
    }
    if (decoded === '.' || decoded === '..') throw badPath('dot segments are not allowed', subject)
    if (DECODED_FORBIDDEN.test(decoded)) throw badPath('encoded separators, control characters, ";" and double encoding are not allowed', subject)
    out.push(encodeSegment(decoded))
  }
  return out.join('/') + (trailingSlash ? '/' : '')
}

function encodeSegment (decoded: string): string {
  let encoded = ''
  for (const char of decoded) {
    encoded += SEGMENT_SAFE.test(char) ? char : encodeURIComponent(char)
  }
  return encoded
}

/**
 * Splits the raw request URL into the remainder below `/<storeId>/live/` and the raw query. The store segment
 * must appear verbatim: a store id the router decoded from percent-encoding (`org%5Fa`) is refused, so the
 * store that was authorized is exactly the one in the URL that is forwarded.
 */
export function splitLiveUrl (rawUrl: string, storeId: string): { remainder: string, query: string } {
  const q = rawUrl.indexOf('?')
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q)
  const query = q === -1 ? '' : rawUrl.slice(q + 1)
  const marker = `/${storeId}/live`
  const at = path.indexOf(marker)
  if (at === -1) throw badPath('the store id must not be percent-encoded')
  const rest = path.slice(at + marker.length)
  if (rest !== '' && !rest.startsWith('/')) throw badPath('the store id must not be percent-encoded')
  return { remainder: rest.slice(1), query }
}

/** A raw query that can be forwarded as it came: printable ASCII only (no space, no control or 8-bit bytes). */
const PLAIN_QUERY = /^[\x21-\x7e]*$/

/**
 * The path and query a request is sent to on its lane: the lane's base path, then the canonical remainder and
 * the raw query (re-encoded the way a URL would encode it, should it hold anything beyond printable ASCII). The
 * relay itself sends `pathBelowBase` to the engine, which prefixes the target's base path (parsed once per target).
 */
export function lanePath (baseUrl: string, remainder: string, query: string): string {
  const basePath = new URL(baseUrl).pathname
  return (basePath.endsWith('/') ? basePath.slice(0, -1) : basePath) + pathBelowBase(remainder, query)
}

/** The path and query below a target's base path (the upstream engine prefixes the target's own base path). */
export function pathBelowBase (remainder: string, query: string): string {
  const path = `/${remainder}`
  if (query === '') return path
  if (PLAIN_QUERY.test(query)) return `${path}?${query}`
  const encoded = new URL('http://lane.invalid/')
  encoded.search = `?${query}`
  return path + encoded.search
}

/**
 * `pathBelowBase(canonicalLanePath(remainder), sentQuery)` for the `remainder` and `query` that `splitLiveUrl` took
 * from `rawUrl` (`sentQuery`: the query to send, e.g. without an access token): the end of `rawUrl` itself when
 * both go as they came, one flat slice of it instead of a string built from three (undici would flatten it to
 * check it).
 */
export function livePathBelowBase (rawUrl: string, remainder: string, query: string, sentQuery: string): string {
  const canonical = canonicalLanePath(remainder)
  const asCame = canonical === remainder && remainder !== '' && sentQuery === query &&
    (query === '' ? rawUrl.charCodeAt(rawUrl.length - 1) !== 63 : PLAIN_QUERY.test(query))
  if (!asCame) return pathBelowBase(canonical, sentQuery)
  return rawUrl.slice(rawUrl.length - 1 - remainder.length - (query === '' ? 0 : query.length + 1))
}
