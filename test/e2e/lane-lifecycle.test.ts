import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { rewriteAndReload } from '../helpers/reload-helpers.js'
import { until } from '../helpers/wait-for.js'

/**
 * A store's lane lives with the config (issue 13 item 4), on a real `lanegate start` reloaded with SIGHUP: a reload
 * that removes a store lets the relay in flight to its lane finish, then closes the gateway's connections to that
 * lane; its live path answers as a store that does not exist; the other lane keeps its connections. The lanes keep
 * idle keep-alive sockets a minute, so a socket that closes was closed by the gateway.
 */

// The demo account's secret is `demo-exchange-secret` (gateway.yaml).
const SECRET_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'

const config = (dataDir: string, stores: string): string => `
server: { data_dir: ${dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  exchange:live.read: { description: Read from a store's lane }
organizations:
  - id: org_hq
    name: HQ
    stores:${stores}
service_accounts:
  - client_id: demo-exchange
    name: Demo
    organization: org_hq
    scopes: [exchange:live.read]
    secrets:
      - { created: "2026-11-01", hash: "${SECRET_HASH}" }
services:
  live:
    prefix: /v1/stores
    envelope: exchange
    policies: [ { auth: {} } ]
    routes:
      read:
        - scope: { all: [exchange:live.read] }
        - organization: { param: store_org_id, not_found: true }
      write:
        - scope: { all: [exchange:live.read] }
        - organization: { param: store_org_id, not_found: true }
`
const store = (id: string, lane: Backend): string => `
      - id: ${id}
        name: Store ${id}
        lane: { base_url: "${lane.url}" }`

let gateway: SpawnedGateway
let file: string
let dataDir: string
let laneA: Backend
let laneB: Backend
let token: string
/** Answers the /slow relay lane A is holding. */
let releaseSlow: () => void = () => {}

async function rewrite (text: string): Promise<void> {
  await rewriteAndReload(gateway, file, text)
}

async function live (storeId: string, path: string): Promise<string> {
  const res = await fetch(`${gateway.base}/v1/stores/${storeId}/live${path}`, { headers: { authorization: `Bearer ${token}` } })
  return `${res.status} ${await res.text()}`
}

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-lane-lifecycle-'))
  laneA = await startBackend(t, 'A')
  laneB = await startBackend(t, 'B')
  for (const lane of [laneA, laneB]) {
    lane.server.keepAliveTimeout = 60_000
    lane.handle((req, res) => {
      const answer = (): void => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`${lane.name} ${req.url ?? ''}`) }
      // /slow waits until the test releases it: in flight for as long as a reload takes to land.
      if (req.url === '/slow') releaseSlow = answer
      else answer()
    })
  }
  file = join(dir, 'gateway.yaml')
  dataDir = join(dir, 'data')
  await writeFile(file, config(dataDir, store('org_store_a', laneA) + store('org_store_b', laneB)))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  const res = await fetch(`${gateway.base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=demo-exchange&client_secret=demo-exchange-secret',
  })
  token = (await res.json() as { access_token: string }).access_token
})

t.test('a reload that removes a store: its relay in flight completes, its path answers 404, its lane connections close; the other lane keeps its own', async (t) => {
  t.same([await live('org_store_a', '/x'), await live('org_store_b', '/y')], ['200 A /x', '200 B /y'])
  t.equal(laneA.openConnections(), 1, 'the gateway holds a keep-alive connection to lane A')
  const socketsOfB = laneB.openConnections()
  t.equal(socketsOfB, 1, 'and one to lane B')

  const inFlight = live('org_store_a', '/slow')
  t.ok(await until(() => laneA.seen.some((r) => r.url === '/slow')), 'the slow relay reached lane A')
  const logged = gateway.output().length
  await rewrite(config(dataDir, store('org_store_b', laneB)))
  t.ok(await until(async () => !(await live('org_store_a', '/x')).startsWith('200')), 'the reload applied')
  t.equal(await live('org_store_a', '/x'), '404 {"error":"store_not_found","store_org_id":"org_store_a","message":"Store not found or not accessible."}',
    'the removed store answers as an unknown store does (the organization policy: 404 store_not_found)')
  const seenByA = laneA.seen.length
  releaseSlow()
  t.equal(await inFlight, '200 A /slow', 'the relay in flight during the removal completed')
  t.ok(await until(() => laneA.openConnections() === 0), 'the removed lane\'s pool closed its connections (lane A keeps idle ones 60 s)')

  t.equal(await live('org_store_b', '/z'), '200 B /z')
  t.equal(laneB.openConnections(), socketsOfB, 'lane B: the same connection count before and after the reload')
  t.equal((await live('org_store_a', '/x')).slice(0, 4), '404 ')
  t.equal(laneA.seen.length, seenByA, 'lane A got nothing after the removal')
  t.notMatch(gateway.output().slice(logged), /take effect only after a restart/, 'removing a store needs no restart')
})

t.test('a reload that adds the store back: its lane is served again, on a new pool', async (t) => {
  await rewrite(config(dataDir, store('org_store_a', laneA) + store('org_store_b', laneB)))
  t.ok(await until(async () => (await live('org_store_a', '/back')) === '200 A /back'), 'served again')
  t.equal(laneA.openConnections(), 1)
  t.equal(laneB.openConnections(), 1, 'lane B still on its one connection')
})
