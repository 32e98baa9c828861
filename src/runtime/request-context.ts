import type { EnvelopeName } from '../errors/envelopes.js'
import type { ResponseHooks } from '../plugin/response-phase.js'
import type { Snapshot } from './snapshot.js'

/** Who is calling, as the auth policy established it from a verified bearer token. */
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
 * What one request carries through its policy chain and handler. The snapshot is taken once when the request
 * starts, so a hot reload never changes the rules half-way through a request.
 */
export interface RequestContext {
  readonly snapshot: Snapshot
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
  principal?: Principal
  /** The response phase's hooks the chain registered (`context.onResponseHead`/`onResponseSent`); usually none. */
  response?: ResponseHooks
}

declare module 'fastify' {
  interface FastifyRequest {
    gw: RequestContext
  }
}
