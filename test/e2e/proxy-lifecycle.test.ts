import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { scrape, sample } from '../helpers/prometheus.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { deadPort, startBackend, type Backend } from '../helpers/upstream-servers.js'
import { rewriteAndReload } from '../helpers/reload-helpers.js'
import { until } from '../helpers/wait-for.js'

/**
 * A `proxy` block's upstream lives with the config, not with the traffic (issue 13 item 4), on a real `lanegate
 * start` reloaded with SIGHUP: its active health checks start when the snapshot declaring it is built (a dead
 * target is ejected before any request), and a reload that removes the block stops its probes, lets its requests
 * in flight finish and closes its pools; a reload that adds it back gets a working upstream again.
 *
 * Block `p`: target `dead` (listed first: round robin picks it first) refuses connections, `a` lives. No retry and
 * no passive health: a request picked onto `dead` would answer 502, so only the active probe can keep requests off
 * it. Block `q`: `a` alone, probed too (its requests reach `a` whatever the health checks do). Block `other`, in
 * every version, is probed at the same interval: its probes tell how long a removed block has been left unprobed.
 */
const proxyBlocks = (a: Backend, dead: number): string => `
  p:
    type: proxy
    prefix: /legacy/p
    envelope: exchange
    upstream:
      targets: [ "http://127.0.0.1:${dead}", "${a.url}" ]
      retry: { attempts: 1 }
      health: { active: { path: /health, interval_seconds: 1 } }
    routes:
      any: { methods: [GET], path: "/*" }
  q:
    type: proxy
    prefix: /legacy/q
    envelope: exchange
    upstream:
      targets: [ "${a.url}" ]
      health: { active: { path: /health, interval_seconds: 1 } }
    routes:
      any: { methods: [GET], path: "/*" }`

const config = (dataDir: string, other: Backend, block = ''): string => `
server: { data_dir: ${dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes: {}
services:
  other:
    type: proxy
    prefix: /legacy/other
    envelope: exchange
    upstream: { targets: [ "${other.url}" ], health: { active: { path: /health, interval_seconds: 1 } } }
    routes:
      any: { methods: [GET], path: "/*" }${block}
`

const FAILED_PROBE = 'upstream target failed its health check'
const RESTART = 'these changes take effect only after a restart'

let gateway: SpawnedGateway
let file: string
let dataDir: string
let a: Backend
let other: Backend
let dead: number
/** Answers the /slow request the backend is holding. */
let releaseSlow: () => void = () => {}

async function rewrite (text: string): Promise<void> {
  await rewriteAndReload(gateway, file, text)
}

async function get (path: string, method = 'GET'): Promise<string> {
  const res = await fetch(`${gateway.base}${path}`, { method })
  return `${res.status} ${await res.text()}`
}

/** Probe log lines naming the dead target. */
const failedProbes = (): number => gateway.output().split('\n').filter((line) => line.includes(FAILED_PROBE) && line.includes(`:${dead}`)).length
/** `lanegate_upstream_targets` of one upstream: [available, ejected], both 0 when it has no series. */
async function targetStates (upstream: string): Promise<[number, number]> {
  const families = await scrape(gateway.admin as string)
  return [sample(families, 'lanegate_upstream_targets', { upstream, state: 'available' }), sample(families, 'lanegate_upstream_targets', { upstream, state: 'ejected' })]
}
const probesOf = (backend: Backend): number => backend.seen.filter((r) => r.url === '/health').length
const requestsOf = (backend: Backend): string[] => backend.seen.filter((r) => r.url !== '/health').map((r) => r.url)

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-proxy-lifecycle-'))
  a = await startBackend(t, 'A')
  other = await startBackend(t, 'other')
  dead = await deadPort()
  // Only the gateway may close an idle keep-alive socket: the backend would keep it a minute.
  a.server.keepAliveTimeout = 60_000
  a.handle((req, res) => {
    const answer = (): void => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`A ${req.url ?? ''}`) }
    // /slow waits until the test releases it: in flight for as long as a reload takes to land.
    if (req.url === '/slow') releaseSlow = answer
    else answer()
  })
  file = join(dir, 'gateway.yaml')
  dataDir = join(dir, 'data')
  await writeFile(file, config(dataDir, other, proxyBlocks(a, dead)))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
})

t.test('a dead target is ejected by the active probe at boot, before any request: none meets it', async (t) => {
  t.ok(await until(() => failedProbes() >= 1), 'the boot snapshot\'s probe found the dead target without any request')
  t.same(requestsOf(a), [], 'no request was sent yet')
  // Both targets are probed at once; on a loaded box the dead one's failure may be logged before the live one's
  // probe arrives, so that one is waited for too, not read at the same instant.
  t.ok(await until(() => probesOf(a) >= 1), 'the live target was probed too')
  t.same(await targetStates('p'), [1, 1], 'metrics: one target available, one ejected, before any request')
  t.same(await targetStates('q'), [1, 0])
  const answers: string[] = []
  for (let i = 0; i < 6; i++) answers.push(await get(`/legacy/p/x${i}`))
  t.same(answers, ['200 A /x0', '200 A /x1', '200 A /x2', '200 A /x3', '200 A /x4', '200 A /x5'], 'round robin over two targets sent every request to the live one')
})

t.test('a reload that removes the blocks: the request in flight finishes, the paths answer 404, probes stop, the pools close', async (t) => {
  t.equal(await get('/legacy/q/warm'), '200 A /warm')
  t.ok(a.openConnections() > 0, 'the gateway holds keep-alive connections to the target')
  const inFlight = get('/legacy/q/slow')
  t.ok(await until(() => a.seen.some((r) => r.url === '/slow')), 'the slow request reached the target')
  const logged = gateway.output().length
  await rewrite(config(dataDir, other))
  t.ok(await until(async () => await get('/legacy/q/x') !== '200 A /x'), 'the reload applied')
  t.equal(await get('/legacy/q/x'), '404 {"error":"not_found","message":"Not found."}')
  t.equal(await get('/legacy/p/x'), '404 {"error":"not_found","message":"Not found."}')
  t.equal(await get('/legacy/q/x', 'PUT'), '404 {"error":"not_found","message":"Not found."}', 'its other methods answer 404 too, not 405')
  releaseSlow()
  t.equal(await inFlight, '200 A /slow', 'the request in flight during the removal completed')
  t.ok(await until(() => a.openConnections() === 0), 'the removed block\'s pools closed their connections (the backend keeps idle ones 60 s)')
  const probes = probesOf(a)
  // No probe is an absence: checked once the block that stays, probed at the same 1 s interval by the same
  // process, has been probed three more times (two intervals at least).
  const otherProbes = probesOf(other)
  t.ok(await until(() => probesOf(other) >= otherProbes + 3), 'the block that stays is probed on')
  t.equal(probesOf(a), probes, 'no probe after the removal (interval 1 s)')
  t.equal(a.openConnections(), 0, 'and no new connection')
  t.equal(await get('/legacy/other/y'), '200 other', 'the other block is untouched')
  t.same([await targetStates('p'), await targetStates('q'), await targetStates('other')], [[0, 0], [0, 0], [1, 0]], 'metrics: the removed blocks\' series are gone')
  t.notMatch(gateway.output().slice(logged), new RegExp(RESTART), 'removing a block needs no restart, and no warning says it does')
})

t.test('a reload that adds the blocks back: a new upstream, probing at once, serving the routes registered at start', async (t) => {
  const before = failedProbes()
  const requests = requestsOf(a).length
  const logged = gateway.output().length
  await rewrite(config(dataDir, other, proxyBlocks(a, dead)))
  t.ok(await until(() => failedProbes() > before), 'the new upstream probed the dead target')
  t.same(requestsOf(a).slice(requests), [], 'before any request')
  t.same(await targetStates('p'), [1, 1], 'metrics: the dead target ejected again')
  const answers: string[] = []
  for (let i = 0; i < 4; i++) answers.push(await get(`/legacy/p/again${i}`))
  t.same(answers, ['200 A /again0', '200 A /again1', '200 A /again2', '200 A /again3'])
  t.equal(await get('/legacy/q/again'), '200 A /again')
  t.notMatch(gateway.output().slice(logged), new RegExp(RESTART), 'the blocks started with, added back: no restart needed, none reported')
})

t.test('a reload that adds a block the gateway did not start with: the warning says its routes wait for a restart', async (t) => {
  const logged = gateway.output().length
  const added = `
  n:
    type: proxy
    prefix: /legacy/n
    envelope: exchange
    upstream: { targets: [ "${a.url}" ] }
    routes:
      any: { methods: [GET], path: "/*" }`
  await rewrite(config(dataDir, other, proxyBlocks(a, dead) + added))
  t.ok(await until(() => gateway.output().slice(logged).includes(RESTART)), 'a restart-required warning')
  const warning = gateway.output().slice(logged).split('\n').find((line) => line.includes(RESTART)) as string
  t.same(JSON.parse(warning).keys, ['services.n'], 'the new block is named, not as a prefix change')
  t.match(JSON.parse(warning).msg, `${RESTART}: services.n (a service block the gateway did not start with: routes are mounted at start only, so its paths answer 404 until a restart)`)
  t.equal(await get('/legacy/n/x'), '404 {"error":"Not found."}', 'and its paths do answer 404 until then')
})
