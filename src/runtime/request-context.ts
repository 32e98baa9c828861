import type { StoreAccess } from '../config/indexes.js'
import type { EnvelopeName } from '../errors/envelopes.js'
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
  /**
   * The organization or store the `organization` policy let this caller through to, with the lane serving it (the
   * store-access rule's answer, `ConfigIndexes.access`): services read it instead of deciding again.
   */
  reached?: StoreAccess
}

declare module 'fastify' {
  interface FastifyRequest {
    gw: RequestContext
  }
}
