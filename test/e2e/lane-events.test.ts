import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { nextMessage, openWs } from '../helpers/ws-client.js'
import { priceEvent } from '../simulators/lane-events.js'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'

/**
 * The lane simulator's push endpoint through the live proxy of a real `lanegate start` (what the README shows):
 * price events over a WebSocket (`ws` client) and over SSE (`curl -N`, token as `access_token` as a browser's
 * EventSource would send it).
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'

const config = (lane: LaneSimulator, dataDir: string): string => `
server: { data_dir: ${dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  exchange:live.read: { description: Read lanes }
organizations:
  - id: org_hq
    stores: [ { id: org_store_1, lane: { base_url: "${lane.url}" } } ]
service_accounts:
  - { client_id: pos-app, organization: org_hq, scopes: [exchange:live.read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
services:
  live:
    prefix: /v1/stores
    envelope: exchange
    websocket: true
    policies: [ { auth: {} } ]
    routes:
      read: [ { scope: { all: [exchange:live.read] } }, { organization: { param: store_org_id, not_found: true } } ]
      write: [ { scope: { all: [exchange:live.read] } } ]
`

let gateway: SpawnedGateway
let lane: LaneSimulator
let token: string

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-lane-events-'))
  lane = await startLaneSimulator({ name: 'lane-1' })
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(lane, join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await lane.close()
    await rm(dir, { recursive: true, force: true })
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'pos-app', client_secret: 'demo-exchange-secret' })
  token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
})

t.test('price events pushed by the lane over a WebSocket reach the caller; messages go back to the lane', async (t) => {
  const opened = await openWs(`${gateway.base.replace('http:', 'ws:')}/v1/stores/org_store_1/live/prices/events?interval=50&count=3&access_token=${token}`)
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  const events: string[] = []
  for (let i = 0; i < 3; i++) events.push(String((await nextMessage(opened.ws)).data))
  t.same(events, [1, 2, 3].map((seq) => priceEvent('lane-1', seq)))
  opened.ws.send('ack 3')
  t.same(String((await nextMessage(opened.ws)).data), '{"echo":"ack 3"}')
  opened.ws.close()
})

t.test('the same events as SSE, read with curl -N', async (t) => {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-N', `${gateway.base}/v1/stores/org_store_1/live/prices/events?interval=50&count=3&access_token=${token}`])
    let text = ''
    child.stdout.on('data', (d: Buffer) => { text += d.toString() })
    child.on('error', reject)
    child.on('exit', () => resolve(text))
  })
  t.equal(out, [1, 2, 3].map((seq) => `id: ${seq}\nevent: price\ndata: ${priceEvent('lane-1', seq)}\n\n`).join(''))
  t.equal(lane.requests.at(-1)?.url, '/prices/events?interval=50&count=3', 'the token never reached the lane')
})
