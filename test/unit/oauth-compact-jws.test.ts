import t from 'tap'
import { generateKeyPair, jwtVerify } from 'jose'
import { encodedAccessTokenHeader } from '../../src/oauth/compact-jws.js'
import { signAccessToken, type AccessTokenClaims } from '../../src/oauth/issue-token.js'
import { randomTokenId } from '../../src/node-tuning/random-pool.js'
import { joseToken, TOKEN_CLAIMS } from '../helpers/jose-token.js'

const CLAIMS: AccessTokenClaims = { ...TOKEN_CLAIMS, lifetimeSeconds: 3600, issuedAt: 1_790_000_000 }

for (const alg of ['EdDSA', 'ES256', 'RS256'] as const) {
  t.test(`${alg}: the token verifies with jose and matches the jose-signed one byte for byte up to the signature`, async (t) => {
    // Not extractable, as importPKCS8 makes them: the signer must not need to export the key.
    const { privateKey, publicKey } = await generateKeyPair(alg)
    const key = { kid: `kid-${alg}`, alg, privateKey }
    const signed = await signAccessToken(key, CLAIMS)
    t.same({ jti: signed.jti.length, issuedAt: signed.issuedAt, expiresAt: signed.expiresAt }, { jti: 22, issuedAt: 1_790_000_000, expiresAt: 1_790_003_600 })

    const [header, payload, signature] = signed.token.split('.')
    const [joseHeader, josePayload] = (await joseToken(key, CLAIMS, signed.jti)).split('.')
    t.equal(header, joseHeader, 'header segment identical')
    t.equal(payload, josePayload, 'payload segment identical')
    t.equal(Buffer.from(header as string, 'base64url').toString(), `{"alg":"${alg}","kid":"kid-${alg}","typ":"at+jwt"}`)
    t.equal(Buffer.from(payload as string, 'base64url').toString(),
      '{"client_id":"content-reader","scope":"content:read content:write","scopes":["content:read","content:write"],' +
      '"organization_id":"org_001","token_type":"service","iss":"https://gateway.example","sub":"content-reader",' +
      `"aud":"lanegate","iat":1790000000,"exp":1790003600,"jti":"${signed.jti}"}`)
    if (alg === 'ES256') t.equal(Buffer.from(signature as string, 'base64url').length, 64, 'ES256 signature is r||s (IEEE P1363), not DER')

    const verified = await jwtVerify(signed.token, publicKey, {
      algorithms: [alg], typ: 'at+jwt', issuer: CLAIMS.issuer, audience: CLAIMS.audience, currentDate: new Date(1_790_000_100_000),
    })
    t.same(verified.protectedHeader, { alg, kid: `kid-${alg}`, typ: 'at+jwt' })
    t.same(verified.payload, {
      client_id: 'content-reader',
      scope: 'content:read content:write',
      scopes: ['content:read', 'content:write'],
      organization_id: 'org_001',
      token_type: 'service',
      iss: 'https://gateway.example',
      sub: 'content-reader',
      aud: 'lanegate',
      iat: 1_790_000_000,
      exp: 1_790_003_600,
      jti: signed.jti,
    })
  })
}

t.test('without issuedAt the token is issued now', async (t) => {
  const { privateKey } = await generateKeyPair('EdDSA')
  const before = Math.floor(Date.now() / 1000)
  const { issuedAt, expiresAt } = await signAccessToken({ kid: 'k', alg: 'EdDSA', privateKey }, { ...CLAIMS, issuedAt: undefined as never })
  t.ok(issuedAt >= before && issuedAt <= Math.floor(Date.now() / 1000), 'iat is the current second')
  t.equal(expiresAt, issuedAt + 3600)
})

t.test('a non-finite lifetime is refused, like jose did', async (t) => {
  const { privateKey } = await generateKeyPair('EdDSA')
  await t.rejects(signAccessToken({ kid: 'k', alg: 'EdDSA', privateKey }, { ...CLAIMS, lifetimeSeconds: Number.NaN }), TypeError)
})

t.test('an algorithm the gateway does not sign with is refused', async (t) => {
  const { privateKey } = await generateKeyPair('EdDSA')
  await t.rejects(signAccessToken({ kid: 'k', alg: 'HS256', privateKey }, { ...CLAIMS, lifetimeSeconds: 60 }), { message: 'unsupported signing algorithm HS256' })
})

t.test('the header of each key is its own (kid and alg)', async (t) => {
  t.equal(Buffer.from(encodedAccessTokenHeader('ES256', 'a'), 'base64url').toString(), '{"alg":"ES256","kid":"a","typ":"at+jwt"}')
  t.equal(Buffer.from(encodedAccessTokenHeader('ES256', 'b'), 'base64url').toString(), '{"alg":"ES256","kid":"b","typ":"at+jwt"}')
  t.equal(Buffer.from(encodedAccessTokenHeader('EdDSA', 'a'), 'base64url').toString(), '{"alg":"EdDSA","kid":"a","typ":"at+jwt"}')
})

t.test('token ids from the pool are 128-bit base64url and do not repeat across refills', async (t) => {
  const ids = Array.from({ length: 1000 }, () => randomTokenId())
  t.equal(new Set(ids).size, 1000)
  t.ok(ids.every((id) => /^[A-Za-z0-9_-]{22}$/.test(id)), 'all 22 base64url characters')
})
