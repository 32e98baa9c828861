import { resolve as resolvePath } from 'node:path'
import { createLocalJWKSet, createRemoteJWKSet, type JWK, type JWTVerifyGetKey } from 'jose'
import type { GatewayConfig, UserTokenIssuerConfig } from '../config/types.js'
import type { KeyStore } from '../runtime/shared-resources.js'
import { derivedOnce } from '../runtime/derived-once.js'
import { compileClaimMapping, type ClaimMapping } from './claim-mapping.js'
import { introspectionRules, type IntrospectionRules } from './introspection-rules.js'
import { createDiscovery } from './oidc-discovery.js'

/**
 * How one issuer's tokens are verified. A token is checked against exactly one profile, the one its (unverified)
 * `iss` names, so no token can pass both the service and the user rules (RFC 8725 §3.12).
 */
export interface TokenProfile {
  readonly tokenType: 'service' | 'user'
  readonly issuer: string
  readonly audience: string
  /** The `alg` allow-list: never `none`, never a symmetric algorithm. */
  readonly algorithms: string[]
  readonly getKey: JWTVerifyGetKey
  /**
   * Longest `exp - iat` accepted (before the clock tolerance): the gateway's longest configured lifetime for its
   * own tokens, `max_token_lifetime_seconds` for a user issuer. A validly signed token living longer (a leaked
   * signing key, a misconfigured issuer: `exp` 1e301) is refused.
   */
  readonly maxLifetimeSeconds: number
  /** Accepted `typ` headers, lower case without `application/` (RFC 8725 §3.11). */
  readonly acceptTyp: readonly string[]
  /**
   * How an outside issuer's claims become the caller (`claims:`); undefined: the token must be in lanegate's own
   * profile (token_type, organization_id, scope, client_id, jti).
   */
  readonly mapping: ClaimMapping | undefined
  /** Whether the issuer has a key source: without one its tokens (opaque or not) go to introspection. */
  readonly hasKeys: boolean
  /** How the issuer's opaque tokens are checked (`introspection:`), if they are. */
  readonly introspection: IntrospectionRules | undefined
  /**
   * Everything that decided a verification. A cached principal whose fingerprint differs from the current
   * config's profile (issuer removed, audience or keys changed by a reload) is verified again.
   */
  readonly fingerprint: string
}

/**
 * Loads the development user issuer kept under `development_key_dir` (absolute path). Provided by
 * `src/oauth/dev-user-issuer.ts`; the verifier only needs its public keys.
 */
export type DevUserIssuerLoader = (dir: string) => Promise<{ jwks (): { keys: JWK[] } }>

export interface ProfileSourceDeps {
  readonly keys: KeyStore
  readonly devUserIssuer?: DevUserIssuerLoader
}

/** How long a remote JWKS is trusted before it is fetched again, and the pause between fetches for unknown kids. */
const remoteJwksOptions = { cacheMaxAge: 10 * 60_000, cooldownDuration: 30_000, timeoutDuration: 5_000 }

/**
 * Returns a function giving the profiles of a config, by issuer. Profiles are built once per config snapshot;
 * remote key sets and development issuers are kept across snapshots so a reload does not drop their caches
 * (and does not let a flood of unknown `kid`s refetch more than once per cooldown, C2).
 */
export function createProfileSource (deps: ProfileSourceDeps): (config: GatewayConfig) => ReadonlyMap<string, TokenProfile> {
  const remoteSets = new Map<string, JWTVerifyGetKey>()
  const devSets = new Map<string, Promise<JWTVerifyGetKey>>()
  const discover = createDiscovery()

  function remoteKeys (uri: string): JWTVerifyGetKey {
    let set = remoteSets.get(uri)
    if (set === undefined) {
      set = createRemoteJWKSet(new URL(uri), remoteJwksOptions)
      remoteSets.set(uri, set)
    }
    return set
  }

  function devKeys (dir: string): JWTVerifyGetKey {
    return async function devIssuerKey (header, token) {
      let set = devSets.get(dir)
      if (set === undefined) {
        if (deps.devUserIssuer === undefined) throw new Error('no development user issuer loader was provided')
        set = deps.devUserIssuer(dir).then((issuer) => createLocalJWKSet(issuer.jwks()))
        // A failed load is retried on the next token rather than remembered.
        set.catch(() => devSets.delete(dir))
        devSets.set(dir, set)
      }
      return (await set)(header, token)
    }
  }

  /** The keys at the jwks_uri of the issuer's discovery document (both cached across snapshots). */
  function discoveredKeys (url: string, issuer: string): JWTVerifyGetKey {
    return async function discoveredKey (header, token) {
      const document = await discover(url, issuer)
      return remoteKeys(document.jwks_uri)(header, token)
    }
  }

  function userProfile (entry: UserTokenIssuerConfig, config: GatewayConfig): TokenProfile {
    let getKey: JWTVerifyGetKey
    if (entry.jwks !== undefined) getKey = createLocalJWKSet(entry.jwks as { keys: JWK[] })
    else if (entry.jwks_uri !== undefined) getKey = remoteKeys(entry.jwks_uri)
    else if (entry.discovery_url !== undefined) getKey = discoveredKeys(entry.discovery_url, entry.issuer)
    else if (entry.development_key_dir !== undefined) getKey = devKeys(resolvePath(config.server.data_dir, entry.development_key_dir))
    else getKey = async function noKeys () { throw new Error(`user token issuer ${entry.issuer} has no key source`) }
    const hasKeys = entry.jwks !== undefined || entry.jwks_uri !== undefined || entry.discovery_url !== undefined || entry.development_key_dir !== undefined
    return {
      tokenType: 'user',
      issuer: entry.issuer,
      audience: entry.audience,
      algorithms: asymmetricOnly(entry.algorithms),
      getKey,
      maxLifetimeSeconds: entry.max_token_lifetime_seconds,
      acceptTyp: (entry.accept_typ ?? ['at+jwt']).map((typ) => typ.toLowerCase()),
      mapping: entry.claims === undefined ? undefined : compileClaimMapping(entry.claims),
      hasKeys,
      introspection: entry.introspection === undefined ? undefined : introspectionRules(entry.introspection),
      // The introspection block's secret is left out: the fingerprint is compared, never shown, but need not hold it.
      fingerprint: JSON.stringify(['user', entry.issuer, entry.audience, entry.algorithms, entry.jwks, entry.jwks_uri, entry.discovery_url, entry.development_key_dir, entry.max_token_lifetime_seconds, entry.accept_typ, entry.claims, entry.introspection === undefined ? undefined : { ...entry.introspection, client_secret: undefined }]),
    }
  }

  function serviceProfile (config: GatewayConfig): TokenProfile {
    const published = deps.keys.jwks().keys
    // Every algorithm the gateway can sign with: a key of another algorithm added at runtime (rotation) must not
    // cause false 401s until the next reload. Each published JWK carries its own alg, so this widens nothing.
    const algorithms = ['EdDSA', 'ES256', 'RS256']
    const maxLifetimeSeconds = Math.max(config.issuer.default_lifetime_seconds, ...Object.values(config.issuer.scope_lifetimes))
    return {
      tokenType: 'service',
      issuer: config.issuer.issuer,
      audience: config.issuer.audience,
      algorithms,
      getKey: deps.keys.resolve,
      maxLifetimeSeconds,
      acceptTyp: ['at+jwt'],
      mapping: undefined,
      hasKeys: true,
      introspection: undefined,
      fingerprint: JSON.stringify(['service', config.issuer.issuer, config.issuer.audience, algorithms, published.map((k) => k.kid).sort(), maxLifetimeSeconds]),
    }
  }

  // Once per config snapshot (every request of a snapshot asks with the same config).
  return derivedOnce(function profilesOf (config: GatewayConfig): ReadonlyMap<string, TokenProfile> {
    const map = new Map<string, TokenProfile>()
    for (const entry of config.user_token_issuers) map.set(entry.issuer, userProfile(entry, config))
    // The gateway's own issuer wins if a user issuer repeats it (validation should reject that config anyway).
    map.set(config.issuer.issuer, serviceProfile(config))
    return map
  })
}

/** Drops `none` and HMAC algorithms: a public key must never double as an HMAC secret (RFC 8725 §2.1). */
function asymmetricOnly (algorithms: string[]): string[] {
  return [...new Set(algorithms)].filter((alg) => alg !== 'none' && !alg.startsWith('HS'))
}
