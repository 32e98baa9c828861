import { createHmac, createSecretKey, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ServiceAccountConfig, ServiceAccountSecret } from '../config/types.js'
import type { ConfigIndexes } from '../config/indexes.js'
import { GatewayError } from '../plugin/gateway-error.js'
import { formValue, type FormParameters } from './form-body.js'
import { DUMMY_SECRET_HASH, parseSecretHash, verifySecret, type ParsedSecretHash } from '../secrets/secret-hash.js'
import { RememberedSecret } from '../secrets/same-secret.js'

/** The challenge sent with a failed Basic authentication (RFC 6749 §5.2). */
export const BASIC_CHALLENGE = 'Basic realm="lanegate"'

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post'

/** Client credentials as the request carried them; either may be missing (the endpoint reports which). */
export interface PresentedCredentials {
  method: ClientAuthMethod
  clientId?: string
  clientSecret?: string
}

/** Complete client credentials. */
export interface ClientCredentials {
  method: ClientAuthMethod
  clientId: string
  clientSecret: string
}

const BASIC = /^basic(?:[ \t]+(.*))?$/is
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

function malformedBasic (): GatewayError {
  return new GatewayError('invalid_request', { message: 'The Authorization header does not carry valid Basic credentials.' })
}

/** RFC 6749 §2.3.1: the id and the secret are form-urlencoded before they are joined by `:`. */
function formDecode (text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    throw malformedBasic()
  }
}

function parseBasic (token: string | undefined): { clientId: string, clientSecret: string } {
  const encoded = (token ?? '').trim()
  if (!BASE64.test(encoded)) throw malformedBasic()
  let decoded: string
  try {
    decoded = utf8.decode(Buffer.from(encoded, 'base64'))
  } catch {
    throw malformedBasic()
  }
  const colon = decoded.indexOf(':')
  if (colon === -1) throw malformedBasic()
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) }
}

/**
 * Reads the client's credentials from HTTP Basic (client_secret_basic) or the form body (client_secret_post).
 * Using both mechanisms at once is 400 invalid_request (RFC 6749 §2.3); a `client_id` in the body beside Basic
 * is tolerated only when it names the same client. Authorization schemes other than Basic are ignored here.
 */
export function readCredentials (authorization: string | undefined, body: FormParameters): PresentedCredentials {
  const basic = authorization === undefined ? null : BASIC.exec(authorization.trim())
  if (basic === null) {
    return { method: 'client_secret_post', clientId: formValue(body, 'client_id'), clientSecret: formValue(body, 'client_secret') }
  }
  if (body.has('client_secret')) {
    throw new GatewayError('invalid_request', { message: 'Client credentials were sent both in the Authorization header and in the body; use one.' })
  }
  const { clientId, clientSecret } = parseBasic(basic[1])
  const bodyId = formValue(body, 'client_id')
  if (bodyId !== undefined && bodyId !== clientId) {
    throw new GatewayError('invalid_request', { message: 'The client_id in the body differs from the one in the Authorization header.' })
  }
  return { method: 'client_secret_basic', clientId: clientId === '' ? undefined : clientId, clientSecret: clientSecret === '' ? undefined : clientSecret }
}

/** 401 invalid_client; Basic failures carry the Basic challenge (RFC 6749 §5.2). */
export function invalidClient (method: ClientAuthMethod, message?: string): GatewayError {
  return new GatewayError('invalid_client', {
    ...(message === undefined ? {} : { message }),
    headers: method === 'client_secret_basic' ? { 'www-authenticate': BASIC_CHALLENGE } : {},
  })
}

export interface ClientAuthenticatorOptions {
  /** Successful verifications remembered (LRU). */
  cacheSize?: number
  cacheTtlMs?: number
  /** The scrypt check (tests count calls); defaults to `verifySecret`. */
  verify?: (secret: string, hash: ParsedSecretHash) => Promise<boolean>
  /** Clock in ms of the success cache and the connection slots (tests); defaults to `performance.now`. */
  now?: () => number
}

/**
 * What the authenticator remembers of one connection: the last client that authenticated there. Opaque to the
 * caller, who keeps one per connection (client-slot.ts).
 */
export interface ClientSlot {
  entry?: unknown
}

export interface ClientAuthenticator {
  /**
   * The account these credentials authenticate, or 401 invalid_client. Unknown ids and wrong secrets fail
   * identically and cost the same scrypt work; a revoked account is reported only after its secret verified. A
   * secret verified before answers at once, without a promise (from the connection's `slot`, else the success
   * cache, and so may throw); a first-seen secret, an unknown client and a wrong secret come through a promise.
   */
  authenticate (credentials: ClientCredentials, indexes: ConfigIndexes, slot?: ClientSlot): ServiceAccountConfig | Promise<ServiceAccountConfig>
}

/**
 * A slot's memory: the secret that authenticated there (compared in constant time), the account object it was
 * checked against (a reload brings new ones, so a changed config is never answered from the slot) and when the
 * success cache's entry for it expires, so the slot never outlives what the cache would answer.
 */
interface SlotEntry {
  readonly clientId: string
  readonly secret: RememberedSecret
  readonly account: ServiceAccountConfig
  readonly until: number
}

/**
 * Builds the client authenticator. Verified secrets are remembered in an LRU keyed by
 * HMAC-SHA256(process-random key, client_id NUL secret), one digest per request; the entry lists the declared
 * hashes that secret matched, so the cache never holds the secret and a secret removed from gateway.yaml stops
 * matching at once. A connection's slot skips even the digest for a keep-alive client repeating its credentials.
 */
export function createClientAuthenticator (options: ClientAuthenticatorOptions = {}): ClientAuthenticator {
  const cacheKey = createSecretKey(randomBytes(32))
  const ttl = options.cacheTtlMs ?? 15 * 60_000
  const clock = options.now === undefined ? performance : { now: options.now }
  const now = (): number => clock.now()
  // ttlResolution 0: each lookup reads the clock, and no timer is armed (the default 1 ms one runs per lookup).
  const verified = new LRUCache<string, readonly string[]>({ max: options.cacheSize ?? 10_000, ttl, ttlResolution: 0, perf: clock })
  const parsed = new WeakMap<ServiceAccountSecret, ParsedSecretHash>()
  const verify = options.verify ?? verifySecret
  /**
   * Verifications under way, by digest and hash: concurrent first requests of one client share one
   * scrypt run (~70 ms, 32 MiB) instead of each starting their own, which starved the thread pool (50 at once
   * answered nothing for seconds). Entries leave when the run settles; only successes go to `verified`.
   */
  const inFlight = new Map<string, Promise<boolean>>()

  function digest (clientId: string, secret: string): string {
    return createHmac('sha256', cacheKey).update(`${clientId}\0${secret}`).digest('base64url')
  }

  function parsedHash (secret: ServiceAccountSecret): ParsedSecretHash {
    let hash = parsed.get(secret)
    if (hash === undefined) {
      // Validation rejects malformed hashes; should one slip through it costs the same and never matches.
      hash = parseSecretHash(secret.hash) ?? DUMMY_SECRET_HASH
      parsed.set(secret, hash)
    }
    return hash
  }

  function remember (key: string, hash: string): void {
    const known = verified.get(key)
    verified.set(key, known === undefined ? [hash] : [...known, hash])
  }

  function verifyShared (key: string, clientSecret: string, secret: ServiceAccountSecret): Promise<boolean> {
    const flight = `${key}\0${secret.hash}`
    let pending = inFlight.get(flight)
    if (pending === undefined) {
      pending = verify(clientSecret, parsedHash(secret))
        .then((ok) => {
          if (ok) remember(key, secret.hash)
          return ok
        })
        .finally(() => inFlight.delete(flight))
      inFlight.set(flight, pending)
    }
    return pending
  }

  /** Whether the success cache holds one of the account's declared hashes for this digest. */
  function cachedMatch (account: ServiceAccountConfig, key: string): boolean {
    const known = verified.get(key)
    return known !== undefined && account.secrets.some((s) => known.includes(s.hash))
  }

  async function secretMatches (account: ServiceAccountConfig, clientSecret: string, key: string): Promise<boolean> {
    if (account.secrets.length === 0) {
      await verify(clientSecret, DUMMY_SECRET_HASH)
      return false
    }
    // Every hash is checked, in parallel, without stopping at the first match: the work does not depend on
    // which secret (old or new) was presented.
    const results = await Promise.all(account.secrets.map((s) => verifyShared(key, clientSecret, s)))
    return results.includes(true)
  }

  function accepted (account: ServiceAccountConfig, method: ClientAuthMethod): ServiceAccountConfig {
    if (account.status !== 'active') throw invalidClient(method, 'The client has been revoked.')
    return account
  }

  function fromSlot (slot: ClientSlot | undefined, account: ServiceAccountConfig, credentials: ClientCredentials): boolean {
    const entry = slot?.entry as SlotEntry | undefined
    return entry !== undefined && entry.account === account && entry.clientId === credentials.clientId &&
      entry.secret.matches(credentials.clientSecret) && now() < entry.until
  }

  function fillSlot (slot: ClientSlot | undefined, account: ServiceAccountConfig, credentials: ClientCredentials, key: string): void {
    if (slot === undefined) return
    const remaining = verified.getRemainingTTL(key)
    const entry: SlotEntry = { clientId: credentials.clientId, secret: new RememberedSecret(credentials.clientSecret), account, until: now() + remaining }
    slot.entry = entry
  }

  async function authenticateFirstSeen (credentials: ClientCredentials, account: ServiceAccountConfig, key: string, slot: ClientSlot | undefined): Promise<ServiceAccountConfig> {
    if (!await secretMatches(account, credentials.clientSecret, key)) throw invalidClient(credentials.method)
    fillSlot(slot, account, credentials, key)
    return accepted(account, credentials.method)
  }

  async function unknownClient (credentials: ClientCredentials): Promise<never> {
    await verify(credentials.clientSecret, DUMMY_SECRET_HASH)
    throw invalidClient(credentials.method)
  }

  function authenticate (credentials: ClientCredentials, indexes: ConfigIndexes, slot?: ClientSlot): ServiceAccountConfig | Promise<ServiceAccountConfig> {
    const account = indexes.accounts.get(credentials.clientId)
    if (account === undefined) return unknownClient(credentials)
    if (fromSlot(slot, account, credentials)) return accepted(account, credentials.method)
    const key = digest(credentials.clientId, credentials.clientSecret)
    if (!cachedMatch(account, key)) return authenticateFirstSeen(credentials, account, key, slot)
    fillSlot(slot, account, credentials, key)
    return accepted(account, credentials.method)
  }

  return { authenticate }
}
