import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { apiKeyConfig, apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * `external-auth` on a real `lanegate start` in front of a real backend, asking a real decision server: an allow
 * (with a header taken from the decision) reaches the backend, a deny and a decision that never comes do not, and a
 * cached decision is not asked again.
 */
t.test('external-auth on a running gateway: allow, deny, timeout and cache hit', async (t) => {
  const backend = await startBackend(t, 'pricing')
  backend.handle((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ sku: req.url, entitlement: req.headers['x-entitlement'] ?? null }))
  })
  const decisions = await startBackend(t, 'decisions')
  decisions.handle((_req, res, body) => {
    const asked = JSON.parse(body) as { path: string }
    if (asked.path.endsWith('/denied')) { res.writeHead(403); res.end(); return }
    // Never answers: the gateway's timeout_ms ends the wait.
    if (asked.path.endsWith('/slow')) return
    res.writeHead(200, { 'x-entitlement': `gold;${asked.path}`, 'x-unlisted': 'not taken' })
    res.end()
  })
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-external-auth-e2e-'))
  const file = join(dir, 'gateway.yaml')
  const yaml = apiKeyConfig({ hashes: await apiKeyHashes(), backend: backend.url, dataDir: join(dir, 'data') })
    .replace('policies: [ { scope: { all: [pricing:read] } } ]',
      `policies: [ { scope: { all: [pricing:read] } }, { external-auth: { url: "${decisions.url}/decide", headers: [x-till-id], timeout_ms: 500, cache_seconds: 60, add_headers: [x-entitlement] } } ]`)
  // The api-key config's admin listener takes a free port (admin: { port: 0 }): 9464 may be another gateway's.
  await writeFile(file, yaml)
  const gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  const get = async (path: string) => {
    const res = await fetch(`${gateway.base}/legacy/pricing${path}`, { headers: { 'x-api-key': KEYS.till, 'x-till-id': 'till-1' } })
    return { status: res.status, body: await res.json() as unknown }
  }

  t.same(await get('/prices/9'), { status: 200, body: { sku: '/prices/9', entitlement: 'gold;/legacy/pricing/prices/9' } })
  t.same(JSON.parse(decisions.seen[0]?.body ?? ''), {
    method: 'GET',
    path: '/legacy/pricing/prices/9',
    service: 'pricing',
    route: 'read_price',
    headers: { 'x-till-id': 'till-1' },
    principal: { token_type: 'service', subject: 'till-legacy', client_id: 'till-legacy', organization_id: 'org_hq_demo', scopes: ['pricing:read', 'exchange:live.read'], issuer: 'http://localhost:8080' },
  })
  t.same(await get('/prices/9'), { status: 200, body: { sku: '/prices/9', entitlement: 'gold;/legacy/pricing/prices/9' } }, 'the cached allow adds the header too')
  t.equal(decisions.seen.length, 1, 'the second request was a cache hit')

  t.same(await get('/prices/denied'), { status: 403, body: { error: 'Forbidden.' } })
  t.same(await get('/prices/slow'), { status: 503, body: { error: 'auth_unavailable', message: 'The authorization service did not answer; retry shortly.' } })
  t.same(backend.seen.map((r) => r.url), ['/prices/9', '/prices/9'], 'refused requests never reached the backend')
  t.match(gateway.output(), /external-auth: no decision; refused with 503/)
})
