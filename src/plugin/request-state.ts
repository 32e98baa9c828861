import type { EnvelopeName } from './envelope-name.js'
import type { ResponseHooks } from './response-phase.js'

/** Who is calling, as an auth-like policy established it (`context.setPrincipal`) from a verified credential. */
export interface Principal {
  tokenType: 'service' | 'user'
  /** `sub` claim. */
  subject: string
  /** `client_id` claim (service accounts: the account's client id). */
  clientId: string
  /** `organization_id` claim: the organization whose tree the caller may reach. */
  organizationId: string
  scopes: ReadonlySet<string>
  /** `jti` claim. */
  tokenId: string
  /** `exp` claim, seconds since epoch. */
  expiresAt: number
  issuer: string
}

/**
 * What one request carries through its policy chain and handler (`request.gw`): the route it matched, the caller
 * once an auth-like step set it, and the response hooks the chain registered. The gateway adds its own internals
 * (the config snapshot the request started on, the store a policy reached), which are not part of the contract.
 */
export interface RequestState {
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
  /** Set through `context.setPrincipal`; read through `context.principal`. */
  principal?: Principal
  /** The response phase's hooks the chain registered (`context.onResponseHead`/`onResponseSent`); usually none. */
  response?: ResponseHooks
}

declare module 'fastify' {
  interface FastifyRequest {
    gw: RequestState
  }
}
