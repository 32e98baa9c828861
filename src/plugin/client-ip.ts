import { isIPv4, isIPv6 } from 'node:net'
import type { FastifyRequest } from 'fastify'

/**
 * The rate-limit key of a request's client address. `request.ip` is the socket peer unless the peer is one of
 * `server.trusted_proxies` (fastify's `trustProxy`), so a rotating `X-Forwarded-For` from anyone else cannot
 * mint new buckets (D2). IPv6 clients are keyed by their /64, the smallest block an ISP hands out, so rotating
 * addresses inside one allocation stays one bucket (D3); IPv4-mapped IPv6 addresses count as their IPv4.
 */
export function clientIpKey (request: FastifyRequest): string {
  return addressKey(request.ip)
}

/** The bucket key of one address (see {@link clientIpKey}). */
export function addressKey (address: string): string {
  if (isIPv4(address)) return address
  const withoutZone = address.split('%')[0] as string
  if (!isIPv6(withoutZone)) return address
  const groups = expandIPv6(withoutZone.toLowerCase())
  // ::ffff:a.b.c.d is an IPv4 client seen through a dual-stack socket.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const high = groups[6] as number
    const low = groups[7] as number
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` and a trailing dotted quad expanded). */
function expandIPv6 (address: string): number[] {
  let text = address
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)))
  const left = parse(head)
  if (tail === undefined) return left
  const right = parse(tail)
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}
