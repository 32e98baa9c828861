import type { FastifyBaseLogger } from 'fastify'

/** How often one issuer's failing source is logged again. */
const WARN_EVERY_MS = 60_000

/**
 * A warning about an issuer's outside source (its keys, its introspection endpoint): the operator's problem, met on
 * every request while it lasts, so it is logged at most once a minute per issuer. `fields` never hold the token.
 */
export function issuerWarning (logger: FastifyBaseLogger, message: string): (issuer: string, fields: Record<string, unknown>) => void {
  const last = new Map<string, number>()
  return function warnIssuer (issuer, fields) {
    const now = Date.now()
    if ((last.get(issuer) ?? 0) + WARN_EVERY_MS > now) return
    last.set(issuer, now)
    logger.warn({ ...fields, issuer }, message)
  }
}
