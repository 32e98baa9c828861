import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { cacheYaml } from '../helpers/cache-config.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * RFC 9111 §4.4 on a real `lanegate start` in front of a real backend: a 2xx/3xx answer to a PUT, POST or DELETE
 * drops the cached answers of its URL (every caller's), whether the write went through a route of its own or through the cached route itself; an error answer drops
 * nothing. The write used to leave the old body served as a HIT.
 */
const hashes = await apiKeyHashes()
const backend = await startBackend(t, 'pricing')
const values = new Map<string, string>()
backend.handle((req, res, body) => {
  const path = (req.url ?? '').split('?')[0] ?? ''
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60' })
    res.end(`${path}=${values.get(path) ?? 'initial'}`)
    return
  }
  if (body === 'refuse') {
    res.writeHead(409, { 'content-type': 'text/plain' })
    res.end('conflict')
    return
  }
  values.set(path, body)
  const headers: Record<string, string> = { 'content-type': 'text/plain' }
  const also = req.headers['x-test-location']
  if (typeof also === 'string') headers[req.headers['x-test-header'] === 'content-location' ? 'content-location' : 'location'] = also
  res.writeHead(req.method === 'POST' ? 201 : 200, headers)
  res.end('stored')
})
const dir = await mkdtemp(join(tmpdir(), 'lanegate-cache-write-'))
const file = join(dir, 'gateway.yaml')
// The api-key config's admin listener takes a free port (admin: { port: 0 }): 9464 may be another gateway's.
await writeFile(file, cacheYaml(hashes, backend.url, { dataDir: join(dir, 'data'), writes: true }))
const gateway = await spawnGateway({ config: file, admin: false })
t.teardown(async () => {
  gateway.child.kill('SIGTERM')
  await gateway.exited
  await rm(dir, { recursive: true, force: true })
})

const TILL = { 'x-api-key': KEYS.till }

async function call (path: string, method = 'GET', body?: string, headers: Record<string, string> = TILL) {
  const res = await fetch(`${gateway.base}/legacy/pricing${path}`, { method, headers, body })
  return { status: res.status, cache: res.headers.get('x-cache'), body: await res.text() }
}

t.test('a 2xx PUT through the write route drops the cached GET of its URL: the next GET is a MISS with the new body', async (t) => {
  t.same(await call('/prices/w1'), { status: 200, cache: 'MISS', body: '/prices/w1=initial' })
  t.same(await call('/prices/w1'), { status: 200, cache: 'HIT', body: '/prices/w1=initial' })
  t.same(await call('/prices/w1', 'PUT', '12.50'), { status: 200, cache: null, body: 'stored' })
  t.same(await call('/prices/w1'), { status: 200, cache: 'MISS', body: '/prices/w1=12.50' })
  t.same(await call('/prices/w1'), { status: 200, cache: 'HIT', body: '/prices/w1=12.50' })
})

t.test('an error answer to a write drops nothing', async (t) => {
  t.same(await call('/prices/w2'), { status: 200, cache: 'MISS', body: '/prices/w2=initial' })
  t.same(await call('/prices/w2', 'PUT', 'refuse'), { status: 409, cache: null, body: '{"error":"upstream_error","upstream_status":409,"upstream_body":"conflict","message":"The upstream service answered 409."}' })
  t.same(await call('/prices/w2'), { status: 200, cache: 'HIT', body: '/prices/w2=initial' })
})

t.test('a write drops every caller\'s entry of the URL, and a DELETE invalidates too', async (t) => {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  const token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
  const other = { authorization: `Bearer ${token}` }
  t.equal((await call('/prices/w3', 'GET', undefined, other)).cache, 'MISS')
  t.equal((await call('/prices/w3', 'GET', undefined, other)).cache, 'HIT')
  t.same(await call('/prices/w3', 'DELETE', 'gone'), { status: 200, cache: null, body: 'stored' })
  t.same(await call('/prices/w3', 'GET', undefined, other), { status: 200, cache: 'MISS', body: '/prices/w3=gone' }, 'another client\'s entry went too')
})

t.test('a relayed Location names the backend, and is not relayed: it invalidates nothing (plugins/cache-invalidation covers Location)', async (t) => {
  t.equal((await call('/prices/far')).cache, 'MISS')
  const res = await fetch(`${gateway.base}/legacy/pricing/prices/new`, { method: 'POST', body: 'x', headers: { ...TILL, 'x-test-location': '/legacy/pricing/prices/far' } })
  t.same([res.status, res.headers.get('location'), await res.text()], [201, null, 'stored'])
  t.equal((await call('/prices/far')).cache, 'HIT')
})

t.test('a PUT through the cached route itself drops its entry', async (t) => {
  t.same(await call('/notes/n1'), { status: 200, cache: 'MISS', body: '/notes/n1=initial' })
  t.same(await call('/notes/n1'), { status: 200, cache: 'HIT', body: '/notes/n1=initial' })
  t.same(await call('/notes/n1', 'PUT', 'edited'), { status: 200, cache: null, body: 'stored' })
  t.same(await call('/notes/n1'), { status: 200, cache: 'MISS', body: '/notes/n1=edited' })
})
