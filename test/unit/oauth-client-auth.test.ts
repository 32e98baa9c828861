import t from 'tap'
import { buildIndexes } from '../../src/config/indexes.js'
import { createClientAuthenticator, readCredentials, type ClientAuthenticator, type ClientCredentials } from '../../src/oauth/client-auth.js'
import { parseFormBody } from '../../src/oauth/form-body.js'
import { verifySecret, type ParsedSecretHash } from '../../src/secrets/secret-hash.js'
import { basicAuth } from '../helpers/oauth-app.js'
import { buildOauthConfig, SECRETS } from '../helpers/oauth-config.js'

/** `auth.authenticate` as a promise: a secret verified before answers (or throws) at once. */
async function authenticate (auth: ClientAuthenticator, credentials: ClientCredentials, indexes: ReturnType<typeof buildIndexes>) {
  return auth.authenticate(credentials, indexes)
}

const form = (text: string) => parseFormBody(Buffer.from(text))
const b64 = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`

t.test('credentials from the body (client_secret_post)', async (t) => {
  t.same(readCredentials(undefined, form('client_id=a&client_secret=b')), { method: 'client_secret_post', clientId: 'a', clientSecret: 'b' })
  t.same(readCredentials(undefined, form('client_id=a')), { method: 'client_secret_post', clientId: 'a', clientSecret: undefined })
})

t.test('Basic credentials are form-urldecoded after base64 (RFC 6749 §2.3.1, A2)', async (t) => {
  t.same(readCredentials(basicAuth('my client', SECRETS.special), form('')), { method: 'client_secret_basic', clientId: 'my client', clientSecret: SECRETS.special })
  t.same(readCredentials(b64('id:a:b'), form('')), { method: 'client_secret_basic', clientId: 'id', clientSecret: 'a:b' }, 'a raw colon in the secret survives')
  t.same(readCredentials(`bAsIc  ${Buffer.from('id:s').toString('base64')}`, form('')), { method: 'client_secret_basic', clientId: 'id', clientSecret: 's' }, 'scheme is case-insensitive')
})

t.test('Basic plus a body secret is invalid_request (A7)', async (t) => {
  t.throws(() => readCredentials(basicAuth('a', 'b'), form('client_secret=b')), {
    code: 'invalid_request', message: 'Client credentials were sent both in the Authorization header and in the body; use one.',
  })
})

t.test('Basic plus the same client_id in the body is accepted; a different one is not', async (t) => {
  t.same(readCredentials(basicAuth('a', 'b'), form('client_id=a')), { method: 'client_secret_basic', clientId: 'a', clientSecret: 'b' })
  t.throws(() => readCredentials(basicAuth('a', 'b'), form('client_id=z')), { code: 'invalid_request' })
})

t.test('malformed Basic values are invalid_request', async (t) => {
  for (const header of ['Basic', 'Basic !!!', b64('no-colon'), b64('id:%zz'), 'Basic ' + Buffer.from([0xff, 0x3a]).toString('base64')]) {
    t.throws(() => readCredentials(header, form('')), { code: 'invalid_request' }, header)
  }
})

t.test('other Authorization schemes are ignored (body credentials apply)', async (t) => {
  t.same(readCredentials('Bearer abc', form('client_id=a&client_secret=b')), { method: 'client_secret_post', clientId: 'a', clientSecret: 'b' })
})

t.test('authenticator: right secret, wrong secret, unknown id, revoked, secret longer than 72 bytes', async (t) => {
  const config = await buildOauthConfig()
  const indexes = buildIndexes(config)
  const auth = createClientAuthenticator()
  const post = (clientId: string, clientSecret: string) => authenticate(auth, { method: 'client_secret_post', clientId, clientSecret }, indexes)
  t.equal((await post('content-reader', SECRETS.content)).client_id, 'content-reader')
  t.equal((await post('content-reader', SECRETS.content)).client_id, 'content-reader', 'again (from the success cache)')
  await t.rejects(post('content-reader', 'wrong'), { code: 'invalid_client', message: 'Client authentication failed.', headers: {} })
  await t.rejects(post('nobody', 'wrong'), { code: 'invalid_client', message: 'Client authentication failed.', headers: {} })
  await t.rejects(post('revoked', 'wrong'), { code: 'invalid_client', message: 'Client authentication failed.' }, 'revoked with a wrong secret looks like any failure')
  await t.rejects(post('revoked', SECRETS.revoked), { code: 'invalid_client', message: 'The client has been revoked.' })
  t.equal((await post('long', SECRETS.long)).client_id, 'long')
  await t.rejects(post('long', SECRETS.longTwin), { code: 'invalid_client' }, 'G2: bytes after 72 count')
  await t.rejects(authenticate(auth, { method: 'client_secret_basic', clientId: 'nobody', clientSecret: 'x' }, indexes),
    { code: 'invalid_client', headers: { 'www-authenticate': 'Basic realm="lanegate"' } })
})

t.test('authenticator: a secret removed from the config stops working even after it was cached', async (t) => {
  const config = await buildOauthConfig()
  const auth = createClientAuthenticator()
  const post = (indexes: ReturnType<typeof buildIndexes>, clientSecret: string) => authenticate(auth, { method: 'client_secret_post', clientId: 'rotating', clientSecret }, indexes)
  const before = buildIndexes(config)
  t.equal((await post(before, SECRETS.rotatingOld)).client_id, 'rotating')
  t.equal((await post(before, SECRETS.rotatingNew)).client_id, 'rotating')
  const rotating = config.service_accounts.find((a) => a.client_id === 'rotating')!
  const after = buildIndexes({ ...config, service_accounts: [{ ...rotating, secrets: rotating.secrets.slice(1) }] })
  await t.rejects(post(after, SECRETS.rotatingOld), { code: 'invalid_client' })
  t.equal((await post(after, SECRETS.rotatingNew)).client_id, 'rotating')
})

/** verifySecret with a call count and a gate, so a test decides when the scrypt runs finish. */
function countingVerify () {
  const calls: string[] = []
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  async function verify (secret: string, hash: ParsedSecretHash): Promise<boolean> {
    calls.push(secret)
    await gate
    return verifySecret(secret, hash)
  }
  return { calls, release, verify }
}

t.test('authenticator: 20 concurrent first requests of one client run scrypt once (single-flight)', async (t) => {
  const indexes = buildIndexes(await buildOauthConfig())
  const counter = countingVerify()
  const auth = createClientAuthenticator({ verify: counter.verify })
  const requests = Array.from({ length: 20 }, () => authenticate(auth, { method: 'client_secret_post', clientId: 'content-reader', clientSecret: SECRETS.content }, indexes))
  counter.release()
  const accounts = await Promise.all(requests)
  t.same(accounts.map((a) => a.client_id), Array(20).fill('content-reader'))
  t.equal(counter.calls.length, 1, 'one scrypt run shared by all 20')
  await authenticate(auth, { method: 'client_secret_post', clientId: 'content-reader', clientSecret: SECRETS.content }, indexes)
  t.equal(counter.calls.length, 1, 'later requests come from the success cache')
})

t.test('authenticator: concurrent wrong secrets share a run but the failure is not cached', async (t) => {
  const indexes = buildIndexes(await buildOauthConfig())
  const counter = countingVerify()
  const auth = createClientAuthenticator({ verify: counter.verify })
  const post = (clientSecret: string) => authenticate(auth, { method: 'client_secret_post', clientId: 'content-reader', clientSecret }, indexes)
  const wrong = [post('wrong'), post('wrong'), post('also-wrong')]
  counter.release()
  const results = await Promise.allSettled(wrong)
  t.same(results.map((r) => r.status), ['rejected', 'rejected', 'rejected'])
  t.same(counter.calls, ['wrong', 'also-wrong'], 'one run per distinct secret')
  await t.rejects(post('wrong'), { code: 'invalid_client' })
  t.same(counter.calls, ['wrong', 'also-wrong', 'wrong'], 'a failure is verified again, not remembered')
})

t.test('authenticator: a rotating client with two secrets checks both hashes once for concurrent requests', async (t) => {
  const indexes = buildIndexes(await buildOauthConfig())
  const counter = countingVerify()
  const auth = createClientAuthenticator({ verify: counter.verify })
  const requests = Array.from({ length: 5 }, () => authenticate(auth, { method: 'client_secret_post', clientId: 'rotating', clientSecret: SECRETS.rotatingNew }, indexes))
  counter.release()
  t.same((await Promise.all(requests)).map((a) => a.client_id), Array(5).fill('rotating'))
  t.equal(counter.calls.length, 2, 'each of the two hashes verified once')
})
