import type { FastifyBaseLogger } from 'fastify'
import { RateLimiterRes } from 'rate-limiter-flexible'
import type { IssuerConfig } from '../config/types.js'
import { GatewayError } from '../plugin/gateway-error.js'
import type { MemoryWindowCounter } from '../limits/request-counter.js'
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
 * With counts in this process (`localWindow`) the checks answer synchronously; with a shared store, a promise.
 */
export interface TokenLimits {
  /** 429 when this address has used up its failed authentications. */
  checkFailedAuth (ip: string, issuer: IssuerConfig): void | Promise<void>
  /** Counts one failed authentication against this address. */
  recordFailedAuth (ip: string, issuer: IssuerConfig): Promise<void>
  /** Counts one authenticated request; 429 over the client's limit. */
  consumeClient (clientId: string, issuer: IssuerConfig): void | Promise<void>
}

function retryAfterSeconds (msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000))
}

function tooMany (msBeforeNext: number, limit: string, message?: string): GatewayError {
  const seconds = retryAfterSeconds(msBeforeNext)
  return new GatewayError('rate_limit_exceeded', {
    ...(message === undefined ? {} : { message }),
    fields: { retry_after: seconds },
    headers: { 'retry-after': String(seconds) },
    limit,
  })
}

const FAILED_AUTH_MESSAGE = 'Too many failed client authentications from this address; retry after the indicated number of seconds.'

export function createTokenLimits (limiters: LimiterRegistry, logger: FastifyBaseLogger): TokenLimits {
  /** A limiter store failure: let the request through (`open`) or answer 503 (`closed`), never a bogus 429. */
  function storeFailed (error: unknown): void {
    if (limiters.onStoreError === 'closed') throw new GatewayError('service_unavailable', { cause: error })
    logger.warn({ err: error }, 'token endpoint limiter store failed; request let through (on_store_error: open)')
  }

  function failedAuthLimit (issuer: IssuerConfig) {
    const { points, window_seconds: windowSeconds } = issuer.failed_auth_limit
    return { key: 'ip' as const, points, window_seconds: windowSeconds }
  }

  function clientLimit (issuer: IssuerConfig) {
    const { points, window_seconds: windowSeconds } = issuer.token_rate_limit
    return { key: 'client' as const, points, window_seconds: windowSeconds }
  }

  async function checkFailedAuthInStore (ip: string, issuer: IssuerConfig): Promise<void> {
    let res: RateLimiterRes | null
    try {
      res = await limiters.get(FAILED_AUTH_LIMITER, failedAuthLimit(issuer)).get(ip)
    } catch (error) {
      return storeFailed(error)
    }
    if (res !== null && res.consumedPoints >= issuer.failed_auth_limit.points) {
      throw tooMany(res.msBeforeNext, 'issuer.failed_auth_limit', FAILED_AUTH_MESSAGE)
    }
  }

  async function consumeClientInStore (clientId: string, issuer: IssuerConfig): Promise<void> {
    try {
      await limiters.get(CLIENT_LIMITER, clientLimit(issuer)).consume(clientId)
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw tooMany(rejection.msBeforeNext, 'issuer.token_rate_limit')
      storeFailed(rejection)
    }
  }

  /**
   * The in-process windows of the last issuer settings seen (undefined with a shared store): a memo of one, so a
   * request does not build the limits' settings twice, and a reload that changes them is seen at once.
   */
  let windowsFor: IssuerConfig | undefined
  let windows: { failedAuth: MemoryWindowCounter, client: MemoryWindowCounter } | undefined

  function localWindows (issuer: IssuerConfig) {
    if (issuer !== windowsFor) {
      const failedAuth = limiters.localWindow?.(FAILED_AUTH_LIMITER, failedAuthLimit(issuer))
      const client = limiters.localWindow?.(CLIENT_LIMITER, clientLimit(issuer))
      windows = failedAuth === undefined || client === undefined ? undefined : { failedAuth, client }
      windowsFor = issuer
    }
    return windows
  }

  return {
    checkFailedAuth (ip, issuer) {
      const local = localWindows(issuer)?.failedAuth
      if (local === undefined) return checkFailedAuthInStore(ip, issuer)
      const window = local.peek(ip)
      if (window !== undefined && window.used >= issuer.failed_auth_limit.points) {
        throw tooMany(window.msBeforeReset, 'issuer.failed_auth_limit', FAILED_AUTH_MESSAGE)
      }
    },

    async recordFailedAuth (ip, issuer) {
      const local = localWindows(issuer)?.failedAuth
      if (local !== undefined) {
        local.add(ip, 1)
        return
      }
      try {
        await limiters.get(FAILED_AUTH_LIMITER, failedAuthLimit(issuer)).penalty(ip, 1)
      } catch (error) {
        // The failure itself is what the caller reports; a lost count only weakens the brake for a moment.
        logger.warn({ err: error }, 'could not count a failed client authentication')
      }
    },

    consumeClient (clientId, issuer) {
      const local = localWindows(issuer)?.client
      if (local === undefined) return consumeClientInStore(clientId, issuer)
      const outcome = local.count(clientId)
      if (!outcome.allowed) throw tooMany(outcome.msBeforeReset, 'issuer.token_rate_limit')
    },
  }
}
