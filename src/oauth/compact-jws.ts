import { KeyObject } from 'node:crypto'
import type { CryptoKey } from 'jose'

/**
 * What synchronous compact JWS signing with `node:crypto.sign` needs (token-template.ts signs): the same signature
 * as jose's, without WebCrypto's job dispatch around it (docs/performance.md, "The tricks in the code"). jose still
 * does everything else (key import, verification, JWKS).
 */

/** The node:crypto digest and signature options of each algorithm the gateway signs with. */
const ALGORITHMS: Record<string, { digest: string | null, dsaEncoding?: 'ieee-p1363' }> = {
  EdDSA: { digest: null },
  // JWS ES256 signatures are the raw r‖s pair (RFC 7518 §3.4), not DER: node's default is DER.
  ES256: { digest: 'sha256', dsaEncoding: 'ieee-p1363' },
  // RSASSA-PKCS1-v1_5 is node's default RSA padding.
  RS256: { digest: 'sha256' },
}

/** The node:crypto digest and signature options of `alg`; undefined for an algorithm the gateway does not sign with. */
export function signingAlgorithm (alg: string): { digest: string | null, dsaEncoding?: 'ieee-p1363' } | undefined {
  return Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined
}

/** The KeyObject behind each CryptoKey (no copy: node's CryptoKey wraps one; extractable or not). */
const keyObjects = new WeakMap<CryptoKey, KeyObject>()

export function keyObjectOf (key: CryptoKey): KeyObject {
  let keyObject = keyObjects.get(key)
  if (keyObject === undefined) {
    // Cast: jose's CryptoKey is the DOM type, node:crypto's KeyObject.from takes webcrypto's; the same object at run time.
    keyObject = KeyObject.from(key as Parameters<typeof KeyObject.from>[0])
    keyObjects.set(key, keyObject)
  }
  return keyObject
}

/** Encoded protected headers by `alg kid`: a key signs many tokens with the same header. */
const encodedHeaders = new Map<string, string>()
const MAX_CACHED_HEADERS = 64

/**
 * The base64url protected header `{alg, kid, typ}` in that key order, as jose's `setProtectedHeader` serialises
 * it (JSON.stringify in insertion order).
 */
export function encodedAccessTokenHeader (alg: string, kid: string): string {
  const cacheKey = `${alg} ${kid}`
  let encoded = encodedHeaders.get(cacheKey)
  if (encoded === undefined) {
    encoded = Buffer.from(JSON.stringify({ alg, kid, typ: 'at+jwt' })).toString('base64url')
    // Keys rotate rarely; the bound only keeps a pathological caller from growing the map without end.
    if (encodedHeaders.size >= MAX_CACHED_HEADERS) encodedHeaders.clear()
    encodedHeaders.set(cacheKey, encoded)
  }
  return encoded
}
