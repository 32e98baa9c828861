import type { FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'
import { definePolicy, type PolicyOptionProblem, type StepOutcome } from '../../src/plugin/index.js'
import { ipRestrictionSchema } from './schema.js'

type Block = [ipaddr.IPv4 | ipaddr.IPv6, number]

/**
 * `ip-restriction`: refuses clients by address, IPv4 and IPv6. The address is fastify's `request.ip`: the socket
 * peer, or the client named in X-Forwarded-For only when the peer is one of `server.trusted_proxies`, so a caller
 * cannot forge its way in. IPv4-mapped IPv6 peers (`::ffff:10.0.0.1`) count as their IPv4 address. `deny` wins over
 * `allow`; with `allow`, anything outside it is refused. The refusal is the policy's own `ip_not_allowed` (403),
 * rendered in the route's envelope.
 */
const ipRestriction = definePolicy({
  name: 'ip-restriction',
  description: 'Allows or refuses the client\'s IP address (IPv4 and IPv6 CIDR blocks), honouring server.trusted_proxies.',
  // Reads only the request, the caller and the config: run again on the route's open WebSockets after a reload.
  recheck: true,
  schema: ipRestrictionSchema,
  errors: {
    ip_not_allowed: { status: 403, message: 'Requests from this address are not allowed on this route.' },
  },
  check (options) {
    const problems: PolicyOptionProblem[] = []
    for (const list of ['allow', 'deny'] as const) {
      options[list]?.forEach((block, index) => {
        if (parseBlock(block) === undefined) problems.push({ path: `${list}/${index}`, message: `not an IP address or CIDR block: "${block}"` })
      })
    }
    return problems
  },
  summarize: (options) => [options.allow && `allow ${options.allow.join(', ')}`, options.deny && `deny ${options.deny.join(', ')}`].filter(Boolean).join('; '),
  explain (options) {
    const rules = [options.allow && `allow ${options.allow.join(', ')}`, options.deny && `deny ${options.deny.join(', ')}`].filter(Boolean).join('; ')
    return { outcome: 'depends', status: 403, code: 'ip_not_allowed', note: `depends on the client address (${rules})` }
  },
  create (options, context) {
    const allow = options.allow?.map(toBlock)
    const deny = options.deny?.map(toBlock) ?? []
    return function ipRestrictionStep (request: FastifyRequest): StepOutcome {
      const address = parseAddress(request.ip)
      if (address === undefined || deny.some((block) => inBlock(address, block)) || (allow !== undefined && !allow.some((block) => inBlock(address, block)))) {
        return context.refuse('ip_not_allowed')
      }
    }
  },
})

function parseBlock (text: string): Block | undefined {
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text)
    const address = ipaddr.parse(text)
    return [address, address.kind() === 'ipv4' ? 32 : 128]
  } catch {
    return undefined
  }
}

function toBlock (text: string): Block {
  const block = parseBlock(text)
  if (block === undefined) throw new Error(`not an IP address or CIDR block: "${text}"`)
  // An IPv4-mapped IPv6 block matches IPv4 clients (the client address is normalised the same way).
  if (block[0].kind() === 'ipv6' && (block[0] as ipaddr.IPv6).isIPv4MappedAddress() && block[1] >= 96) {
    return [(block[0] as ipaddr.IPv6).toIPv4Address(), block[1] - 96]
  }
  return block
}

function parseAddress (ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.process(ip.split('%')[0] as string)
  } catch {
    return undefined
  }
}

function inBlock (address: ipaddr.IPv4 | ipaddr.IPv6, [range, bits]: Block): boolean {
  return address.kind() === range.kind() && address.match(range, bits)
}

export default ipRestriction
