import t from 'tap'
import { generateKeyPair, jwtVerify } from 'jose'
import { signFromTemplate, tokenTemplate } from '../../src/oauth/token-template.js'
import { createTokenTemplates } from '../../src/oauth/token-templates.js'
import type { IssuerConfig, ServiceAccountConfig } from '../../src/config/types.js'
import { joseToken, TOKEN_CLAIMS } from '../helpers/jose-token.js'

const CLAIMS = TOKEN_CLAIMS

t.test('the payload signed from a template is the whole payload encoded at once, for every split of the fixed part', async (t) => {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA')
  const key = { kid: 'k', alg: 'EdDSA', privateKey }
  // Client ids of 0–5 extra characters move the fixed JSON's length through every remainder mod 3; "ö" (2 bytes
  // in UTF-8) and "€" (3) put a character across the cut; a quote and a backslash need JSON escapes.
  const ids = ['c', 'cl', 'cli', 'clie', 'clien', 'client', 'ö', 'öö', '€', 'a"b\\c', 'x€ö']
  for (const clientId of ids) {
    const claims = { ...CLAIMS, clientId, subject: clientId }
    const signed = signFromTemplate(tokenTemplate(key, claims), 1_790_000_000, 3600)
    const [header] = signed.token.split('.')
    t.equal(Buffer.from(header as string, 'base64url').toString(), '{"alg":"EdDSA","kid":"k","typ":"at+jwt"}', `${clientId}: header`)
    t.equal(signed.token, await joseToken(key, { ...claims, issuedAt: 1_790_000_000, lifetimeSeconds: 3600 }, signed.jti), `${clientId}: jose's token, byte for byte (EdDSA signs deterministically)`)
    const verified = await jwtVerify(signed.token, publicKey, { currentDate: new Date(1_790_000_100_000) })
    t.equal(verified.payload.client_id, clientId, `${clientId}: verifies`)
  }
})

t.test('each token from one template has its own jti, iat and exp', async (t) => {
  const { privateKey } = await generateKeyPair('ES256')
  const template = tokenTemplate({ kid: 'k', alg: 'ES256', privateKey }, CLAIMS)
  const first = signFromTemplate(template, 1_790_000_000, 60)
  const second = signFromTemplate(template, 1_790_000_001, 120)
  t.not(first.jti, second.jti)
  t.same([first.issuedAt, first.expiresAt, second.issuedAt, second.expiresAt], [1_790_000_000, 1_790_000_060, 1_790_000_001, 1_790_000_121])
  const jose = await joseToken({ kid: 'k', alg: 'ES256', privateKey }, { ...CLAIMS, issuedAt: 1_790_000_001, lifetimeSeconds: 120 }, second.jti)
  t.equal(second.token.split('.')[1], jose.split('.')[1], 'the payload jose writes for the same claims (ES256 signatures differ each time)')
})

t.test('an algorithm the gateway does not sign with is refused when the template is built', async (t) => {
  const { privateKey } = await generateKeyPair('EdDSA')
  t.throws(() => tokenTemplate({ kid: 'k', alg: 'HS256', privateKey }, CLAIMS), { message: 'unsupported signing algorithm HS256' })
})

t.test('a client keeps its template until the key, issuer, audience or scopes change', async (t) => {
  const { privateKey } = await generateKeyPair('EdDSA')
  const keyA = { kid: 'a', alg: 'EdDSA', privateKey }
  const keyB = { kid: 'b', alg: 'EdDSA', privateKey }
  const account = { client_id: 'content-reader', organization: 'org_001' } as ServiceAccountConfig
  const issuer = { issuer: 'https://gateway.example', audience: 'lanegate' } as IssuerConfig
  const templateFor = createTokenTemplates()
  const scopes = ['content:read']
  const first = templateFor(keyA, account, issuer, scopes, 'content:read')
  t.equal(templateFor(keyA, account, issuer, scopes, 'content:read'), first, 'the same template again')
  const rotated = templateFor(keyB, account, issuer, scopes, 'content:read')
  t.not(rotated, first, 'a new signing key (rotation, rescan) builds it again')
  t.equal(rotated.key, keyB)
  const moved = templateFor(keyB, account, { ...issuer, audience: 'other' }, scopes, 'content:read')
  t.equal(moved.claims.audience, 'other', 'a reload changing the audience builds it again')
  const renamed = templateFor(keyB, account, { ...issuer, audience: 'other', issuer: 'https://new.example' }, scopes, 'content:read')
  t.equal(renamed.claims.issuer, 'https://new.example', 'a reload changing the issuer builds it again')
  const fewer = templateFor(keyB, account, { ...issuer, audience: 'other', issuer: 'https://new.example' }, ['content:write'], 'content:write')
  t.same([fewer.scope, fewer.claims.scopes], ['content:write', ['content:write']], 'other granted scopes build it again')
  const otherAccount = { ...account, client_id: 'other' }
  t.equal(templateFor(keyB, otherAccount, issuer, scopes, 'content:read').claims.clientId, 'other', 'each account has its own')
})
