import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type WebSocket from 'ws'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { scrape, sample } from '../helpers/prometheus.js'
import { until } from '../helpers/wait-for.js'
import { startWsBackend, type WsBackend } from '../helpers/ws-backend.js'
import { closeOf, openWs } from '../helpers/ws-client.js'

/**
 * 1,000 concurrent WebSockets through one real `lanegate start` process, every message delivered in order, and
 * the WebSocket metrics on the admin listener (issue 22).
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const CONNECTIONS = 1000
const MESSAGES = 20

const config = (backend: WsBackend, dataDir: string): string => `
server: { data_dir: ${dataDir} }
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
      stream: { methods: [GET], path: "/*", websocket: true }
`

let gateway: SpawnedGateway
let backend: WsBackend

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-ws-load-'))
  backend = await startWsBackend(t)
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(backend, join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
})

t.test('1,000 concurrent connections through one process: every message comes back, in order', async (t) => {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'pricing-rw', client_secret: 'demo-exchange-secret' })
  const token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
  const url = `${gateway.base.replace('http:', 'ws:')}/events/load`
  const sockets: WebSocket[] = []
  // Opened in batches of 100: a thousand handshakes at once would only measure the listen backlog.
  for (let batch = 0; batch < CONNECTIONS / 100; batch++) {
    const opened = await Promise.all(Array.from({ length: 100 }, () => openWs(url, { headers: { authorization: `Bearer ${token}` } })))
    for (const o of opened) {
      if (!o.open) throw new Error(`refused: ${o.status} ${o.body}`)
      sockets.push(o.ws)
    }
  }
  t.equal(sockets.length, CONNECTIONS)
  const families = await scrape(gateway.admin as string)
  t.equal(sample(families, 'lanegate_websocket_connections', { service: 'events', route: 'stream' }), CONNECTIONS, 'the gauge counts every open connection')

  const received = sockets.map(() => [] as string[])
  const done = sockets.map((ws, i) => new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      received[i]!.push(String(data))
      if (received[i]!.length === MESSAGES) resolve()
    })
  }))
  for (let m = 0; m < MESSAGES; m++) sockets.forEach((ws, i) => { ws.send(`${i}:${m}`) })
  await Promise.all(done)
  const expected = (i: number): string[] => Array.from({ length: MESSAGES }, (_, m) => `${i}:${m}`)
  t.equal(received.filter((list, i) => JSON.stringify(list) === JSON.stringify(expected(i))).length, CONNECTIONS, 'every connection got all its messages, in order')

  await Promise.all(sockets.map((ws) => { const c = closeOf(ws); ws.close(1000); return c }))
  t.ok(await until(async () => sample(await scrape(gateway.admin as string), 'lanegate_websocket_connections', { service: 'events', route: 'stream' }) === 0, 5000), 'the gauge is back to 0')
  const after = await scrape(gateway.admin as string)
  t.same([
    sample(after, 'lanegate_websocket_messages_total', { service: 'events', route: 'stream', direction: 'in' }),
    sample(after, 'lanegate_websocket_messages_total', { service: 'events', route: 'stream', direction: 'out' }),
    sample(after, 'lanegate_websocket_closes_total', { code: '1000' }),
  ], [CONNECTIONS * MESSAGES, CONNECTIONS * MESSAGES, CONNECTIONS])
})
