import type { FastifyBaseLogger } from 'fastify'
import { RateLimiterRes } from 'rate-limiter-flexible'
import type { IssuerConfig } from '../config/types.js'
import { GatewayError } from '../plugin/gateway-error.js'
import type { LimiterRegistry } from '../runtime/shared-resources.js'

/** Limiter names in the shared registry (the same name and settings keep their counts across reloads). */
export const CLIENT_LIMITER = 'oauth-token-client'
export const FAILED_AUTH_LIMITER = 'oauth-token-failed-auth'

/**
 * The token endpoint's two limits:
 * - per client id, the spec's 60 requests a minute, counted only once the client has authenticated, so nobody
 *   without the secret can use up a real client's quota (RELIABILITY A9);
 * - per IP, a brake on failed authentications, checked before any hashing, so guessing costs the guesser and
 *   bounds the scrypt work (G4).
 */
export interface TokenLimits {
  /** 429 when this address has used up its failed authentications. */
  checkFailedAuth (ip: string, issuer: IssuerConfig): Promise<void>
  /** Counts one failed authentication against this address. */
  recordFailedAuth (ip: string, issuer: IssuerConfig): Promise<void>
  /** Counts one authenticated request; 429 over the client's limit. */
  consumeClient (clientId: string, issuer: IssuerConfig): Promise<void>
}

function retryAfterSeconds (res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000))
}

function tooMany (res: RateLimiterRes, limit: string, message?: string): GatewayError {
  const seconds = retryAfterSeconds(res)
  return new GatewayError('rate_limit_exceeded', {
    ...(message === undefined ? {} : { message }),
    fields: { retry_after: seconds },
    headers: { 'retry-after': String(seconds) },
    limit,
  })
}

export function createTokenLimits (limiters: LimiterRegistry, logger: FastifyBaseLogger): TokenLimits {
  /** A limiter store failure: let the request through (`open`) or answer 503 (`closed`), never a bogus 429. */
  function storeFailed (error: unknown): void {
    if (limiters.onStoreError === 'closed') throw new GatewayError('service_unavailable', { cause: error })
    logger.warn({ err: error }, 'token endpoint limiter store failed; request let through (on_store_error: open)')
  }

  function failedAuthLimiter (issuer: IssuerConfig) {
    const { points, window_seconds: windowSeconds } = issuer.failed_auth_limit
    return limiters.get(FAILED_AUTH_LIMITER, { key: 'ip', points, window_seconds: windowSeconds })
  }

  return {
    async checkFailedAuth (ip, issuer) {
      let res: RateLimiterRes | null
      try {
        res = await failedAuthLimiter(issuer).get(ip)
      } catch (error) {
        return storeFailed(error)
      }
      if (res !== null && res.consumedPoints >= issuer.failed_auth_limit.points) {
        throw tooMany(res, 'issuer.failed_auth_limit', 'Too many failed client authentications from this address; retry after the indicated number of seconds.')
      }
    },

    async recordFailedAuth (ip, issuer) {
      try {
        await failedAuthLimiter(issuer).penalty(ip, 1)
      } catch (error) {
        // The failure itself is what the caller reports; a lost count only weakens the brake for a moment.
        logger.warn({ err: error }, 'could not count a failed client authentication')
      }
    },

    async consumeClient (clientId, issuer) {
      const { points, window_seconds: windowSeconds } = issuer.token_rate_limit
      try {
        await limiters.get(CLIENT_LIMITER, { key: 'client', points, window_seconds: windowSeconds }).consume(clientId)
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw tooMany(rejection, 'issuer.token_rate_limit')
        storeFailed(rejection)
      }
    },
  }
}
