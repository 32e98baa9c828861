import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Agent, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { apiKeyConfig, apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'

/** The api-key policy in the whole gateway (inject): a proxy block in front of a real backend that records requests. */
const hashes = await apiKeyHashes()
const unauthenticated = { error: 'Unauthenticated.' }

async function gatewayWith (backend: Backend, options: { apiKey?: string } = {}): Promise<{ gw: TestApp, file: string, rewrite: (o: Partial<Parameters<typeof apiKeyConfig>[0]>) => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-apikey-'))
  const file = join(dir, 'gateway.yaml')
  const base = { hashes, backend: backend.url, dataDir: join(dir, 'data'), ...options }
  await writeFile(file, apiKeyConfig(base))
  const gw = await buildTestApp({ file })
  t.teardown(async () => {
    await gw.close()
    await rm(dir, { recursive: true, force: true })
  })
  return { gw, file, rewrite: async (o) => writeFile(file, apiKeyConfig({ ...base, ...o })) }
}

t.test('a valid key in X-Api-Key reaches the backend with the account\'s scopes; the key is not forwarded', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw } = await gatewayWith(backend)
  for (const key of [KEYS.till, KEYS.tillOld, KEYS.till]) {
    const res = await gw.app.inject({ url: '/legacy/pricing/prices/1?currency=eur', headers: { 'x-api-key': key } })
    t.same({ status: res.statusCode, body: res.body }, { status: 200, body: 'pricing' })
  }
  t.equal(backend.seen.length, 3)
  for (const seen of backend.seen) {
    t.equal(seen.url, '/prices/1?currency=eur')
    t.equal(seen.headers['x-api-key'], undefined)
  }
})

t.test('a key of an account without the route\'s scope is refused by scope (the same principal as its token)', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw } = await gatewayWith(backend)
  const res = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': KEYS.other } })
  t.same({ status: res.statusCode, body: res.json(), challenge: res.headers['www-authenticate'] }, { status: 403, body: { error: 'Forbidden.' }, challenge: undefined })
  t.equal(backend.seen.length, 0)
})

t.test('absent, wrong and twice-sent keys are refused in the route\'s envelope before the backend', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw } = await gatewayWith(backend)
  const absent = await gw.app.inject({ url: '/legacy/pricing/prices/1' })
  t.same({ status: absent.statusCode, body: absent.json(), challenge: absent.headers['www-authenticate'] },
    { status: 401, body: unauthenticated, challenge: 'ApiKey realm="lanegate"' })
  const wrong = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': `${KEYS.till}x` } })
  t.same({ status: wrong.statusCode, body: wrong.json(), challenge: wrong.headers['www-authenticate'] },
    { status: 401, body: unauthenticated, challenge: 'ApiKey realm="lanegate", error="invalid_key"' })
  const again = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': `${KEYS.till}x` } })
  t.equal(again.statusCode, 401, 'a repeated wrong key (negative cache) is still refused')
  const bearerOnly = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { authorization: `Bearer ${await getToken(gw.app, 'demo-content')}` } })
  t.equal(bearerOnly.statusCode, 401, 'a bearer token is not a key unless bearer: true')
  t.equal(backend.seen.length, 0)
})

t.test('query: the key comes from ?api_key and is cut from the URL sent upstream, other parameters kept byte for byte', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw } = await gatewayWith(backend, { apiKey: '{ query: api_key }' })
  const res = await gw.app.inject({ url: `/legacy/pricing/prices/1?a=%2Fx&api_key=${KEYS.till}&b=1+2` })
  t.same({ status: res.statusCode, body: res.body }, { status: 200, body: 'pricing' })
  t.equal(backend.seen[0]?.url, '/prices/1?a=%2Fx&b=1+2')
  const header = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': KEYS.till } })
  t.equal(header.statusCode, 401, 'with only `query` set, the header is not read')
  const twice = await gw.app.inject({ url: `/legacy/pricing/prices/1?api_key=${KEYS.till}&api_key=${KEYS.till}` })
  t.same({ status: twice.statusCode, body: twice.json() }, { status: 400, body: { error: 'bad_request', message: 'Send the API key once.' } })
  t.equal(backend.seen.length, 1)
})

t.test('bearer: true accepts a bearer token instead of a key; both at once is a 400', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw } = await gatewayWith(backend, { apiKey: '{ bearer: true }' })
  const token = await getToken(gw.app, 'demo-content')
  const viaToken = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { authorization: `Bearer ${token}` } })
  t.same({ status: viaToken.statusCode, body: viaToken.body }, { status: 200, body: 'pricing' })
  const viaKey = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': KEYS.till } })
  t.equal(viaKey.statusCode, 200)
  const both = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': KEYS.till, authorization: `Bearer ${token}` } })
  t.same({ status: both.statusCode, body: both.json() }, { status: 400, body: { error: 'bad_request', message: 'Send either an API key or a bearer token, not both.' } })
  const neither = await gw.app.inject({ url: '/legacy/pricing/prices/1' })
  t.same({ status: neither.statusCode, challenge: neither.headers['www-authenticate'] }, { status: 401, challenge: 'ApiKey realm="lanegate", Bearer realm="lanegate"' })
  const badToken = await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { authorization: 'Bearer a.b.c' } })
  t.same({ status: badToken.statusCode, body: badToken.json() }, { status: 401, body: unauthenticated })
  t.equal(backend.seen.length, 2)
})

t.test('a reload that revokes the account refuses its cached key; one that removes a key refuses that key only', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw, rewrite } = await gatewayWith(backend)
  const call = async (key: string) => gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-api-key': key } })
  t.equal((await call(KEYS.till)).statusCode, 200)
  t.equal((await call(KEYS.tillOld)).statusCode, 200)

  await rewrite({ tillStatus: 'revoked' })
  t.match(await gw.gateway.reload(), { outcome: 'applied' })
  const revoked = await call(KEYS.till)
  t.same({ status: revoked.statusCode, body: revoked.json(), challenge: revoked.headers['www-authenticate'] },
    { status: 401, body: unauthenticated, challenge: 'ApiKey realm="lanegate", error="invalid_key", error_description="The client has been revoked"' })

  await rewrite({ tillStatus: 'active', withOldKey: false })
  t.match(await gw.gateway.reload(), { outcome: 'applied' })
  t.equal((await call(KEYS.till)).statusCode, 200, 'active again')
  const removed = await call(KEYS.tillOld)
  t.same({ status: removed.statusCode, challenge: removed.headers['www-authenticate'] }, { status: 401, challenge: 'ApiKey realm="lanegate", error="invalid_key"' })
  t.equal(backend.seen.length, 3)
})

t.test('on one keep-alive connection: the remembered key passes, another key is judged on its own, a reload that revokes the account refuses the next request', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw, rewrite } = await gatewayWith(backend)
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  let connections = 0
  gw.app.server.on('connection', () => { connections++ })
  const port = (gw.app.server.address() as { port: number }).port
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const call = (key: string) => new Promise<{ status: number, body: string, challenge: string | undefined }>((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path: '/legacy/pricing/prices/1', headers: { 'x-api-key': key }, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, challenge: res.headers['www-authenticate'] }))
    }).on('error', reject).end()
  })
  const ok = { status: 200, body: 'pricing', challenge: undefined }
  t.same(await call(KEYS.till), ok)
  t.same(await call(KEYS.till), ok, 'the same key again')
  t.same(await call(`${KEYS.till.slice(0, -1)}x`), { status: 401, body: JSON.stringify(unauthenticated), challenge: 'ApiKey realm="lanegate", error="invalid_key"' },
    'a wrong key of the same length is not served from the connection\'s memory')
  t.same(await call(KEYS.other), { status: 403, body: JSON.stringify({ error: 'Forbidden.' }), challenge: undefined }, 'another account\'s key: that account\'s principal, and no Bearer challenge to a key caller')
  t.same(await call(KEYS.till), ok)

  await rewrite({ tillStatus: 'revoked' })
  t.match(await gw.gateway.reload(), { outcome: 'applied' })
  t.same(await call(KEYS.till), { status: 401, body: JSON.stringify(unauthenticated), challenge: 'ApiKey realm="lanegate", error="invalid_key", error_description="The client has been revoked"' })
  t.equal(connections, 1, 'every request on the one connection')
  t.equal(backend.seen.length, 3)
})

t.test('no key, right or wrong, appears in any log line (debug level)', async (t) => {
  const backend = await startBackend(t, 'pricing')
  const { gw } = await gatewayWith(backend, { apiKey: '{ header: X-Till-Key, query: api_key }' })
  await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-till-key': KEYS.till } })
  await gw.app.inject({ url: `/legacy/pricing/prices/1?api_key=${KEYS.tillOld}` })
  await gw.app.inject({ url: '/legacy/pricing/prices/1', headers: { 'x-till-key': 'wrong-key-wrong-key' } })
  await gw.app.inject({ url: `/legacy/pricing/prices/1?api_key=${KEYS.other}&api_key=x` })
  const logs = gw.logs.join('')
  t.ok(logs.includes('/legacy/pricing/prices/1'), 'the requests were logged')
  for (const key of [KEYS.till, KEYS.tillOld, KEYS.other, 'wrong-key-wrong-key']) t.notOk(logs.includes(key), 'key absent from the logs')
  t.equal(backend.seen.length, 2)
})
