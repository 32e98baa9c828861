import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { cacheYaml } from '../helpers/cache-config.js'
import { until } from '../helpers/wait-for.js'
import { rewriteAndReload } from '../helpers/reload-helpers.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * The cache policy on a real `lanegate start` in front of a real backend that counts what reaches it: hits answered
 * without the backend, its Cache-Control and Vary obeyed, expiry, callers the chain refuses never served, the
 * client partition, and a reload that empties the cache.
 */
const hashes = await apiKeyHashes()
const backend = await startBackend(t, 'pricing')
let served = 0
backend.handle((req, res) => {
  served++
  const sku = (req.url ?? '').split('?')[0]?.split('/').pop() ?? ''
  const control: Record<string, string> = { nostore: 'no-store', private: 'private, max-age=60', short: 'max-age=1', zero: 'max-age=0' }
  res.writeHead(200, {
    'content-type': 'text/plain',
    'cache-control': control[sku] ?? 'max-age=60',
    ...(sku === 'vary' ? { vary: 'Accept-Language' } : {}),
  })
  res.end(`price ${sku} #${served} ${String(req.headers['accept-language'] ?? '')}`)
})
const dir = await mkdtemp(join(tmpdir(), 'lanegate-cache-e2e-'))
const file = join(dir, 'gateway.yaml')
const yaml = (ttl = 60) => cacheYaml(hashes, backend.url, { dataDir: join(dir, 'data'), ttl })
await writeFile(file, yaml())
const gateway = await spawnGateway({ config: file, admin: false })
t.teardown(async () => {
  gateway.child.kill('SIGTERM')
  await gateway.exited
  await rm(dir, { recursive: true, force: true })
})

async function get (sku: string, headers: Record<string, string> = { 'x-api-key': KEYS.till }, method = 'GET') {
  const res = await fetch(`${gateway.base}/legacy/pricing/prices/${sku}`, { method, headers })
  return { status: res.status, cache: res.headers.get('x-cache'), age: res.headers.get('age'), control: res.headers.get('cache-control'), body: await res.text() }
}

function backendCalls (sku: string): number {
  return backend.seen.filter((s) => s.url === `/prices/${sku}`).length
}

t.test('a fresh entry is answered without the backend (GET and HEAD); X-Cache says which', async (t) => {
  const first = await get('a1')
  const second = await get('a1')
  const head = await get('a1', undefined, 'HEAD')
  t.same(first, { status: 200, cache: 'MISS', age: null, control: 'max-age=60', body: first.body })
  t.same(second, { status: 200, cache: 'HIT', age: second.age, control: 'max-age=60', body: first.body })
  t.match(second.age, /^\d+$/)
  t.same({ status: head.status, cache: head.cache, body: head.body }, { status: 200, cache: 'HIT', body: '' })
  t.equal(backendCalls('a1'), 1)
})

t.test('a hit answers the stored headers, its own Age, X-Cache and request id, and the chain\'s headers: nothing else', async (t) => {
  const fetchHeaders = async (): Promise<Record<string, string>> => {
    const res = await fetch(`${gateway.base}/legacy/pricing/prices/h1`, { headers: { 'x-api-key': KEYS.till } })
    return { ...Object.fromEntries(res.headers), body: await res.text() }
  }
  const miss = await fetchHeaders()
  const hit = await fetchHeaders()
  // Per answer, and the framing: the miss is relayed as the backend sent it (chunked), the hit has its length.
  const perAnswer = ['x-request-id', 'x-cache', 'age', 'date', 'transfer-encoding', 'content-length']
  const rest = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !perAnswer.includes(name)))
  t.same(rest(hit), rest(miss), 'the same headers as the answer stored (content type, cache-control, connection), the same body')
  t.equal(miss['cache-control'], 'max-age=60', 'the backend\'s cache-control, not the gateway\'s no-store')
  t.same([miss['x-cache'], miss.age, hit['x-cache']], ['MISS', undefined, 'HIT'])
  t.match(hit.age, /^\d+$/)
  t.equal(hit['content-length'], String(Buffer.byteLength(hit.body)), 'the stored body\'s length')
  t.match(hit['x-request-id'], /^[0-9a-f-]{36}$/)
  t.not(hit['x-request-id'], miss['x-request-id'])
})

t.test('no-store, private and max-age=0 answers are never stored', async (t) => {
  for (const sku of ['nostore', 'private', 'zero']) {
    t.same([(await get(sku)).cache, (await get(sku)).cache], ['MISS', 'MISS'], sku)
    t.equal(backendCalls(sku), 2, sku)
  }
})

t.test('Vary: the backend\'s Vary header and the policy\'s vary list select entries', async (t) => {
  const en = await get('vary', { 'x-api-key': KEYS.till, 'accept-language': 'en' })
  const fr = await get('vary', { 'x-api-key': KEYS.till, 'accept-language': 'fr' })
  const enAgain = await get('vary', { 'x-api-key': KEYS.till, 'accept-language': 'en' })
  t.same([en.cache, fr.cache, enAgain.cache], ['MISS', 'MISS', 'HIT'])
  t.equal(enAgain.body, en.body)
  t.not(fr.body, en.body)
  const langA = await get('lang', { 'x-api-key': KEYS.till, 'x-lang': 'a' })
  const langB = await get('lang', { 'x-api-key': KEYS.till, 'x-lang': 'b' })
  t.same([langA.cache, langB.cache, (await get('lang', { 'x-api-key': KEYS.till, 'x-lang': 'a' })).cache], ['MISS', 'MISS', 'HIT'])
  t.equal(backendCalls('vary') + backendCalls('lang'), 4)
})

t.test('an entry expires with the backend\'s max-age', async (t) => {
  t.equal((await get('short')).cache, 'MISS')
  t.equal((await get('short')).cache, 'HIT')
  t.ok(await until(async () => (await get('short')).cache === 'MISS', 10_000), 'a MISS again once max-age=1 has passed')
})

t.test('callers the chain refuses are never served from the cache; another client has its own partition', async (t) => {
  t.equal((await get('p1')).cache, 'MISS')
  t.equal((await get('p1')).cache, 'HIT')
  const none = await get('p1', {})
  t.same({ status: none.status, cache: none.cache, body: none.body }, { status: 401, cache: null, body: '{"error":"Unauthenticated."}' })
  const wrong = await get('p1', { 'x-api-key': 'not-a-key-at-all' })
  t.same({ status: wrong.status, cache: wrong.cache }, { status: 401, cache: null })
  const noScope = await get('p1', { 'x-api-key': KEYS.other })
  t.same({ status: noScope.status, cache: noScope.cache, body: noScope.body }, { status: 403, cache: null, body: '{"error":"Forbidden."}' })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  const token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
  const other = await get('p1', { authorization: `Bearer ${token}` })
  t.same({ status: other.status, cache: other.cache }, { status: 200, cache: 'MISS' }, 'by: client: another client does not get the first one\'s entry')
  t.equal(backendCalls('p1'), 2)
})

t.test('a reload empties the cache', async (t) => {
  t.equal((await get('r1')).cache, 'MISS')
  t.equal((await get('r1')).cache, 'HIT')
  await rewriteAndReload(gateway, file, yaml(59))
  t.ok(await until(async () => (await get('r1')).cache === 'MISS', 10_000), 'a MISS once the reload applied')
  t.equal((await get('r1')).cache, 'HIT')
})
