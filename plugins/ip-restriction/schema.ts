import { Type, type Static } from '../../src/plugin/index.js'

const cidrList = (description: string) => Type.Array(Type.String({ minLength: 2, description: 'An IPv4 or IPv6 address or CIDR block (10.0.0.0/8, 2001:db8::/32).' }), {
  minItems: 1,
  uniqueItems: true,
  description,
})

export const ipRestrictionSchema = Type.Object({
  allow: Type.Optional(cidrList('Only clients in these blocks may call the route (when given).')),
  deny: Type.Optional(cidrList('Clients in these blocks are refused, even when also allowed.')),
}, {
  description: 'Allows or refuses the client address (request.ip: the socket peer, or X-Forwarded-For from server.trusted_proxies). Give allow, deny or both.',
  additionalProperties: false,
  minProperties: 1,
})

/** Options of the `ip-restriction` policy. */
export type IpRestrictionOptions = Static<typeof ipRestrictionSchema>
