import { GatewayError } from '../../plugin/gateway-error.js'
import { canonicalLanePath, pathBelowBase } from '../live/lane-path.js'

/**
 * The path and query a proxied request is sent to, below the target's base path, from the raw request URL as the
 * caller sent it. The lane proxy's rules apply to all of it (`canonicalLanePath`: dot segments raw or encoded,
 * encoded `/` and `\`, backslashes, NUL and control bytes, `;`, double encoding and empty segments answer 400),
 * and the prefix must appear verbatim: a router that decoded `%70ricing` into the prefix does not make the
 * caller's path the one that was authorized. `strip_prefix: false` sends the prefix on too.
 */
export function proxiedPath (rawUrl: string, prefix: string, stripPrefix: boolean): string {
  const q = rawUrl.indexOf('?')
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q)
  const query = q === -1 ? '' : rawUrl.slice(q + 1)
  if (path === prefix) return pathBelowBase(stripPrefix ? '' : prefix.slice(1), query)
  if (!path.startsWith(`${prefix}/`)) {
    throw new GatewayError('bad_request', { message: 'The path is not accepted: the service prefix must not be percent-encoded.' })
  }
  const remainder = canonicalLanePath(path.slice(prefix.length + 1), 'path')
  return pathBelowBase(stripPrefix ? remainder : `${prefix.slice(1)}/${remainder}`, query)
}
