import type { ConsoleSources } from './console-sources.js'
import { tokenRefusal, tokenReport, type TokenRefusal, type TokenReport } from '../describe/token-report.js'

/**
 * What this gateway makes of a pasted bearer token: verified by the running verifier against the current snapshot,
 * exactly as `auth` verifies a request's (the same issuers, keys, introspection and caches), then mapped and
 * explained per route. A refused token is an answer, not an error: the status and code a request would get.
 */
export async function tokenView (booted: ConsoleSources, pasted: string): Promise<TokenReport | TokenRefusal> {
  const token = pasted.trim().replace(/^Bearer\s+/i, '')
  const snapshot = booted.gateway.current()
  try {
    const principal = await booted.gateway.shared.tokens.verify(token, snapshot.config, snapshot.indexes)
    return tokenReport(token, principal, snapshot.config, booted.gateway.catalog)
  } catch (error) {
    const refused = tokenRefusal(error)
    // A failure that is no request's answer says nothing of the token; its message could, so it is dropped.
    if (refused === undefined) throw new Error('the token could not be checked')
    return refused
  }
}
