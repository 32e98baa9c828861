import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { apiKeyConfig, apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * The api-key policy on a real `lanegate start`: what the proxy service and the live relay send on the wire to a
 * real backend carries no key (header or query), and the process's log lines (debug level) never hold a key.
 */
t.test('the key is stripped before the proxy and live relays and never logged', async (t) => {
  const backend = await startBackend(t, 'backend')
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-apikey-e2e-'))
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, apiKeyConfig({ hashes: await apiKeyHashes(), backend: backend.url, dataDir: join(dir, 'data'), apiKey: '{ header: X-Till-Key, query: api_key }', live: true }))
  const gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })

  const viaHeader = await fetch(`${gateway.base}/legacy/pricing/prices/7?x=1`, { headers: { 'x-till-key': KEYS.till } })
  t.same({ status: viaHeader.status, body: await viaHeader.text() }, { status: 200, body: 'backend' })
  const viaQuery = await fetch(`${gateway.base}/legacy/pricing/prices/7?api_key=${KEYS.tillOld}&x=1`)
  t.same({ status: viaQuery.status, body: await viaQuery.text() }, { status: 200, body: 'backend' })
  const live = await fetch(`${gateway.base}/v1/stores/org_store_001/live/items?api_key=${KEYS.till}&page=2`)
  t.same({ status: live.status, body: await live.text() }, { status: 200, body: 'backend' })
  const liveHeader = await fetch(`${gateway.base}/v1/stores/org_store_001/live/items`, { headers: { 'x-till-key': KEYS.till } })
  t.equal(liveHeader.status, 200)
  const wrong = await fetch(`${gateway.base}/v1/stores/org_store_001/live/items`, { headers: { 'x-till-key': 'not-a-key-not-a-key' } })
  t.same({ status: wrong.status, body: await wrong.json() }, { status: 401, body: { error: 'Unauthenticated.' } })

  t.same(backend.seen.map((s) => s.url), ['/prices/7?x=1', '/prices/7?x=1', '/items?page=2', '/items'])
  for (const seen of backend.seen) t.equal(seen.headers['x-till-key'], undefined, `${seen.url}: no key header upstream`)

  const logs = gateway.output() + gateway.errors()
  t.ok(logs.includes('/v1/stores/org_store_001/live/items'), 'requests were logged')
  for (const key of [KEYS.till, KEYS.tillOld, 'not-a-key-not-a-key']) t.notOk(logs.includes(key), 'no key in the log lines')
})
