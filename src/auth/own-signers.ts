import type { JWK } from 'jose'
import type { KeyStore } from '../runtime/shared-resources.js'
import { internString } from '../node-tuning/claim-interning.js'

/** The gateway's own key that verified a token's signature: its `kid` and public key (as `publicKeyId`). */
export interface Signer {
  readonly kid: string
  readonly key: string
}

/** What the verifier asks of the gateway's own published key set. */
export interface OwnSigners {
  /** The published public key under `kid`, as publicKeyId, or undefined. */
  publishedKey (kid: unknown): string | undefined
  /** One `Signer` object per published key, shared by every token it verified (the cache holds up to 100k). */
  signerOf (kid: string, key: string): Signer
  /** Whether `signer`'s key is still published under its kid with the same public key. */
  stillPublished (signer: Signer): boolean
}

/** A published public key as one comparable string (its kid, type, curve and public parameters). */
function publicKeyId (jwk: JWK): string {
  return JSON.stringify([jwk.kid, jwk.kty, jwk.crv, jwk.alg, jwk.x, jwk.y, jwk.n, jwk.e])
}

/**
 * The signers of the gateway's own tokens. The interned signers are bounded by the keys the gateway has published
 * since it started: `key` is always a published key's id.
 */
export function createOwnSigners (keys: KeyStore): OwnSigners {
  const signers = new Map<string, Signer>()

  function publishedKey (kid: unknown): string | undefined {
    if (typeof kid !== 'string') return undefined
    const jwk = keys.jwks().keys.find((candidate) => candidate.kid === kid)
    return jwk === undefined ? undefined : internString(publicKeyId(jwk))
  }

  function signerOf (kid: string, key: string): Signer {
    let signer = signers.get(key)
    if (signer === undefined) {
      signer = { kid: internString(kid), key }
      signers.set(key, signer)
    }
    return signer
  }

  return {
    publishedKey,
    signerOf,
    stillPublished: (signer) => publishedKey(signer.kid) === signer.key,
  }
}
