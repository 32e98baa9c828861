import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { until } from '../helpers/wait-for.js'
import { startWsBackend, type WsBackend } from '../helpers/ws-backend.js'
import { closeOf, openWs, type UpgradeResult } from '../helpers/ws-client.js'

/**
 * `connection-limit` across `server.workers: 2` on a real `lanegate start`: the primary holds the open-connection
 * counts, so the bound holds for the host, not per worker. Node's cluster hands connections to the workers in
 * turn (round robin), so per-worker counting would admit up to twice `max`.
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'

const config = (backend: WsBackend, dataDir: string): string => `
server: { data_dir: ${dataDir}, workers: 2 }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq
service_accounts:
  - { client_id: pricing-rw, organization: org_hq, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
services:
  events:
    type: proxy
    prefix: /events
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    policies: [ { auth: {} } ]
    routes:
      stream: { methods: [GET], path: "/*", websocket: true, policies: [ { connection-limit: { key: client, max: 2 } } ] }
`

let gateway: SpawnedGateway
let backend: WsBackend

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-ws-workers-'))
  backend = await startWsBackend(t)
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(backend, join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  // Both workers listen before the test counts on round robin.
  await until(() => (gateway.output().match(/Server listening at/g) ?? []).length >= 2, 15_000)
})

t.test('the bound holds across both workers: 2 of 6 upgrades open; a closed one frees a place for any worker', async (t) => {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'pricing-rw', client_secret: 'demo-exchange-secret' })
  const token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
  const url = `${gateway.base.replace('http:', 'ws:')}/events/x`
  const results: UpgradeResult[] = []
  for (let i = 0; i < 6; i++) results.push(await openWs(url, { headers: { authorization: `Bearer ${token}` } }))
  t.same(results.map((r) => r.open ? 101 : r.status), [101, 101, 429, 429, 429, 429])
  const first = results[0]
  if (first?.open === true) {
    const closed = closeOf(first.ws)
    first.ws.close()
    await closed
  }
  let opened = false
  t.ok(await until(async () => {
    const r = await openWs(url, { headers: { authorization: `Bearer ${token}` } })
    if (r.open) {
      opened = true
      r.ws.close()
    }
    return opened
  }, 5000), 'a place freed on one worker is taken again')
  for (const r of results) if (r.open) r.ws.close()
})
