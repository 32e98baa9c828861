import type { IncomingMessage } from 'node:http'
import { traceOf } from '../trace-context.js'
import { activeTracing } from './active-tracing.js'

/** What a token issuance span says: who got a token and what for; never the token, its id or the secret. */
export interface IssuedToken {
  clientId: string
  organizationId: string
  scopes: readonly string[]
  lifetimeSeconds: number
  /** How the client authenticated (client_secret_basic, client_secret_post, …). */
  authMethod: string
}

/**
 * When the token handler started, in ms since the epoch, while span export is on; undefined (and no clock read)
 * while it is off, when the handler then records nothing.
 */
export function issuanceStart (): number | undefined {
  return activeTracing() === undefined ? undefined : performance.timeOrigin + performance.now()
}

/**
 * The `issue token` span (INTERNAL, child of the token request's SERVER span) from `startedMs` (the handler's
 * start: authentication, limits, scopes and signing) to now, for a sampled trace.
 */
export function recordTokenIssuance (req: IncomingMessage, startedMs: number, token: IssuedToken): void {
  const tracing = activeTracing()
  if (tracing === undefined) return
  const requestTrace = traceOf(req)
  if (!requestTrace.sampled) return
  tracing.recordInternal(requestTrace.traceId, requestTrace.spanId, 'issue token', startedMs, performance.timeOrigin + performance.now(), {
    'lanegate.client_id': token.clientId,
    'lanegate.organization_id': token.organizationId,
    'lanegate.scopes': token.scopes.join(' '),
    'lanegate.token_lifetime_s': token.lifetimeSeconds,
    'lanegate.auth_method': token.authMethod,
  })
}
