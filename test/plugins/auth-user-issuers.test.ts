import t from 'tap'
import { Writable } from 'node:stream'
import pino from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import auth from '../../plugins/auth/index.js'
import { createTokenVerifier } from '../../src/auth/token-verifier.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'
import { snapshotOf } from '../helpers/token-config.js'
import { countingJsonServer } from '../helpers/token-jwks-server.js'
import { generateTestKey, mint, userClaims } from '../helpers/token-mint.js'

const remoteIssuer = 'https://remote-users.test'
const devIssuer = 'https://dev-users.test'

t.test('C2: a remote JWKS is fetched once and a random-kid flood triggers no refetch within the cooldown', async (tt) => {
  const remoteKey = await generateTestKey('remote-1')
  const jwks = await countingJsonServer(() => ({ keys: [remoteKey.publicJwk] }))
  tt.teardown(() => jwks.close())
  const env = await tokenEnv({ extraIssuers: [{ issuer: remoteIssuer, audience: 'remote-aud', algorithms: ['EdDSA'], jwks_uri: jwks.url, max_token_lifetime_seconds: 86400 }] })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  const claims = { ...userClaims(), iss: remoteIssuer, aud: 'remote-aud' }

  const ok = await app.inject({ url: '/t', headers: { authorization: `Bearer ${await mint(remoteKey, claims)}` } })
  tt.equal(ok.statusCode, 200)
  tt.equal(jwks.hits(), 1)

  for (let i = 0; i < 25; i++) {
    const token = await mint(remoteKey, { ...claims, jti: `flood-${i}` }, { header: { kid: `random-${Math.random()}` } })
    const res = await app.inject({ url: '/t', headers: { authorization: `Bearer ${token}` } })
    tt.equal(res.statusCode, 401)
  }
  tt.equal(jwks.hits(), 1, 'no refetch during the cooldown')
})

t.test('C2: with the JWKS endpoint down, known keys keep working and unknown kids are 401, not 500', async (tt) => {
  const remoteKey = await generateTestKey('remote-1')
  const jwks = await countingJsonServer(() => ({ keys: [remoteKey.publicJwk] }))
  const env = await tokenEnv({ extraIssuers: [{ issuer: remoteIssuer, audience: 'remote-aud', algorithms: ['EdDSA'], jwks_uri: jwks.url, max_token_lifetime_seconds: 86400 }] })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  const claims = { ...userClaims(), iss: remoteIssuer, aud: 'remote-aud' }
  tt.equal((await app.inject({ url: '/t', headers: { authorization: `Bearer ${await mint(remoteKey, claims)}` } })).statusCode, 200)
  await jwks.close()

  const fresh = await mint(remoteKey, { ...claims, jti: 'after-outage' })
  tt.equal((await app.inject({ url: '/t', headers: { authorization: `Bearer ${fresh}` } })).statusCode, 200)
  const unknown = await mint(remoteKey, claims, { header: { kid: 'rotated-away' } })
  const res = await app.inject({ url: '/t', headers: { authorization: `Bearer ${unknown}` } })
  tt.equal(res.statusCode, 401)
  tt.same(res.json(), { error: 'Unauthenticated.' })
})

t.test('a JWKS endpoint that was never reachable gives 401 and one warning without the token', async (tt) => {
  const remoteKey = await generateTestKey('remote-1')
  const jwks = await countingJsonServer(() => ({}))
  const url = jwks.url
  await jwks.close()
  const lines: string[] = []
  const logger = pino({ level: 'info' }, new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })) as unknown as FastifyBaseLogger
  const env = await tokenEnv({ extraIssuers: [{ issuer: remoteIssuer, audience: 'remote-aud', algorithms: ['EdDSA'], jwks_uri: url, max_token_lifetime_seconds: 86400 }] })
  const verifier = createTokenVerifier({ keys: env.shared.keys, logger })
  const token = await mint(remoteKey, { ...userClaims(), iss: remoteIssuer, aud: 'remote-aud' })
  await tt.rejects(verifier.verify(token, env.config, env.snapshot.indexes), { code: 'unauthenticated', status: 401 })
  await tt.rejects(verifier.verify(token, env.config, env.snapshot.indexes), { code: 'unauthenticated', status: 401 })
  tt.equal(lines.length, 1)
  tt.match(lines[0], /could not load the keys of a token issuer/)
  tt.notOk(lines.join('\n').includes(token), 'the token is not logged')
  tt.notOk(lines.join('\n').includes(token.split('.')[2] as string), 'not even its signature')
})

t.test('a development user issuer is verified with the keys of the injected loader', async (tt) => {
  const devKey = await generateTestKey('dev-1')
  const dirs: string[] = []
  const env = await tokenEnv({
    extraIssuers: [{ issuer: devIssuer, audience: 'dev-aud', algorithms: ['EdDSA'], development_key_dir: 'dev-users', max_token_lifetime_seconds: 86400 }],
    devUserIssuer: async (dir) => { dirs.push(dir); return { jwks: () => ({ keys: [devKey.publicJwk] }) } },
  })
  const { app } = buildPolicyApp({ env, routes: [{ url: '/t', chain: [[auth, {}]] }] })
  tt.teardown(() => app.close())
  const claims = { ...userClaims(), iss: devIssuer, aud: 'dev-aud' }
  for (const jti of ['one', 'two']) {
    const res = await app.inject({ url: '/t', headers: { authorization: `Bearer ${await mint(devKey, { ...claims, jti })}` } })
    tt.equal(res.statusCode, 200)
    tt.match(res.json(), { principal: { tokenType: 'user', issuer: devIssuer } })
  }
  tt.same(dirs, ['/tmp/lanegate-policies-test/dev-users'], 'loaded once, from data_dir')
})

t.test('a development user issuer without a loader rejects its tokens with 401', async (tt) => {
  const devKey = await generateTestKey('dev-1')
  const env = await tokenEnv({ extraIssuers: [{ issuer: devIssuer, audience: 'dev-aud', algorithms: ['EdDSA'], development_key_dir: 'dev-users', max_token_lifetime_seconds: 86400 }] })
  const token = await mint(devKey, { ...userClaims(), iss: devIssuer, aud: 'dev-aud' })
  await tt.rejects(env.shared.tokens.verify(token, env.config, env.snapshot.indexes), { code: 'unauthenticated' })
})

t.test('a remote key set survives a reload (one fetch across snapshots)', async (tt) => {
  const remoteKey = await generateTestKey('remote-1')
  const jwks = await countingJsonServer(() => ({ keys: [remoteKey.publicJwk] }))
  tt.teardown(() => jwks.close())
  const env = await tokenEnv({ extraIssuers: [{ issuer: remoteIssuer, audience: 'remote-aud', algorithms: ['EdDSA'], jwks_uri: jwks.url, max_token_lifetime_seconds: 86400 }] })
  const claims = { ...userClaims(), iss: remoteIssuer, aud: 'remote-aud' }
  await env.shared.tokens.verify(await mint(remoteKey, claims), env.config, env.snapshot.indexes)
  const reloaded = structuredClone(env.config)
  await env.shared.tokens.verify(await mint(remoteKey, { ...claims, jti: 'second' }), reloaded, snapshotOf(reloaded).indexes)
  tt.equal(jwks.hits(), 1)
})
