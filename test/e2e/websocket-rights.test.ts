import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { rewriteAndReload } from '../helpers/reload-helpers.js'
import { generateTestKey, mint, userAudience, userClaims, userIssuer, type TestKey } from '../helpers/token-mint.js'
import { startWsBackend, type WsBackend } from '../helpers/ws-backend.js'
import { waitFor } from '../helpers/wait-for.js'
import { closeOf, nextMessage, openWs } from '../helpers/ws-client.js'

/**
 * Issue 22 item 4 on a real `lanegate start`: an open WebSocket ends when its right to exist ends — the token
 * expires (1008 `token expired` at its exp), a reload revokes the account or takes its scope or organization away
 * (1008), a reload removes the route's block (1001), SIGTERM (1001 to every client, then exit). The live read
 * route relays upgrades to the store's lane with `services.live.websocket: true`. Timings are asserted with
 * generous margins (the machine is shared).
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'
const RO_HASH = '$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g'

/**
 * How late a close may come after what causes it. On an idle machine a reload closes within the spec's 2 s and an
 * expired token at its `exp`; a loaded one is slower, and what a bound must tell apart is "closed by the event"
 * from "left open" (nothing else would ever close these connections): 10 × the spec's 2 s.
 */
const CLOSE_BOUND_MS = 10 * 2000
/** Long, so that closing at SIGTERM (at once) is told from closing when the grace period ends. */
const GRACE_MS = 30_000

interface Variant { roStatus?: string, rwScopes?: string, rwOrganization?: string, withProxy?: boolean }

const config = (lane: WsBackend, key: TestKey, dataDir: string, v: Variant = {}): string => `
server: { data_dir: ${dataDir}, shutdown_grace_ms: ${GRACE_MS} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  exchange:live.read: { description: Read lanes }
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq
    stores: [ { id: org_store_1, lane: { base_url: "${lane.url}/lane", credential: lane-credential } } ]
  - id: org_other
    stores: [ { id: org_store_9 } ]
service_accounts:
  - { client_id: pricing-rw, organization: ${v.rwOrganization ?? 'org_hq'}, scopes: [${v.rwScopes ?? 'pricing:read, exchange:live.read'}], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
  - { client_id: pricing-ro, organization: org_hq, status: ${v.roStatus ?? 'active'}, scopes: [pricing:read, exchange:live.read], secrets: [ { created: "2026-11-01", hash: "${RO_HASH}" } ] }
user_token_issuers:
  - issuer: ${userIssuer}
    audience: ${userAudience}
    jwks: { keys: [ ${JSON.stringify(key.publicJwk)} ] }
services:
  live:
    prefix: /v1/stores
    envelope: exchange
    websocket: { idle_timeout_seconds: 120 }
    policies: [ { auth: {} } ]
    routes:
      read: [ { scope: { all: [exchange:live.read] } }, { organization: { param: store_org_id, not_found: true } } ]
      write: [ { scope: { all: [exchange:live.read] } } ]
${v.withProxy === false ? '' : `  events:
    type: proxy
    prefix: /events
    envelope: exchange
    upstream: { targets: [ "${lane.url}" ] }
    policies: [ { auth: {} } ]
    routes:
      stream: { methods: [GET], path: "/*", websocket: true, policies: [ { scope: { all: [pricing:read] } } ] }
`}`

let gateway: SpawnedGateway
let lane: WsBackend
let key: TestKey
let dir: string
let file: string

async function tokenFor (clientId: string, secret: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret })
  const res = await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })
  return ((await res.json()) as { access_token: string }).access_token
}

async function open (path: string, token: string): Promise<import('ws').WebSocket> {
  const opened = await openWs(`${gateway.base.replace('http:', 'ws:')}${path}`, { headers: { authorization: `Bearer ${token}` } })
  if (!opened.open) throw new Error(`${path} not upgraded: ${opened.status} ${opened.body}`)
  return opened.ws
}

t.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lanegate-ws-rights-'))
  lane = await startWsBackend(t)
  key = await generateTestKey('user-key')
  file = join(dir, 'gateway.yaml')
  await writeFile(file, config(lane, key, join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  })
})

t.test('the live read route upgrades to the store\'s lane with the lane credential', async (t) => {
  const ws = await open('/v1/stores/org_store_1/live/events?since=5', await tokenFor('pricing-rw', 'demo-exchange-secret'))
  ws.send('ping-1')
  t.same(await nextMessage(ws), { data: Buffer.from('ping-1'), binary: false })
  const handshake = lane.handshakes.at(-1)!
  t.same([handshake.url, handshake.headers.authorization], ['/lane/events?since=5', 'lane-credential'])
  const refused = await openWs(`${gateway.base.replace('http:', 'ws:')}/v1/stores/org_store_9/live/events`, { headers: { authorization: `Bearer ${await tokenFor('pricing-rw', 'demo-exchange-secret')}` } })
  t.same(refused.open ? 'open' : [refused.status, JSON.parse(refused.body)], [404, { error: 'store_not_found', message: 'Store not found or not accessible.', store_org_id: 'org_store_9' }])
  ws.close()
})

t.test('a token that expires closes its connection with 1008 "token expired" at exp', async (t) => {
  const now = Math.floor(Date.now() / 1000)
  const exp = now + 4
  const token = await mint(key, userClaims('org_hq', 'pricing:read'), { claims: { exp, iat: now } })
  const ws = await open('/events/user-stream', token)
  const closed = await closeOf(ws)
  t.same([closed.code, closed.reason], [1008, 'token expired'])
  const offMs = closed.at - exp * 1000
  t.ok(offMs >= -1000 && offMs <= CLOSE_BOUND_MS, `closed ${offMs} ms from exp (not before it, less 1 s of rounding to seconds)`)
})

t.test('a reload that revokes the account, or takes its scope or organization away, closes with 1008 at the reload', async (t) => {
  const ro = await open('/events/ro', await tokenFor('pricing-ro', 'demo-content-secret'))
  const rwToken = await tokenFor('pricing-rw', 'demo-exchange-secret')
  const rwEvents = await open('/events/rw', rwToken)
  const rwLive = await open('/v1/stores/org_store_1/live/x', rwToken)
  const roClosed = closeOf(ro)
  const rwEventsClosed = closeOf(rwEvents)
  const rwLiveClosed = closeOf(rwLive)

  // 1) revoke pricing-ro
  let reloadAt = Date.now()
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data'), { roStatus: 'revoked' }))
  const revoked = await roClosed
  t.same([revoked.code, revoked.reason], [1008, 'unauthenticated'])
  t.ok(revoked.at - reloadAt < CLOSE_BOUND_MS, `revoked closed ${revoked.at - reloadAt} ms after the reload`)

  // 2) pricing-rw loses pricing:read: its proxy stream closes, its live stream (exchange:live.read) stays
  reloadAt = Date.now()
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data'), { roStatus: 'revoked', rwScopes: 'exchange:live.read' }))
  const lostScope = await rwEventsClosed
  t.same([lostScope.code, lostScope.reason], [1008, 'forbidden'])
  t.ok(lostScope.at - reloadAt < CLOSE_BOUND_MS, `scope loss closed ${lostScope.at - reloadAt} ms after the reload`)
  rwLive.send('still here')
  t.same((await nextMessage(rwLive)).data.toString(), 'still here', 'a connection whose right stands stays open')

  // 3) the store leaves pricing-rw's tree (the account moves organization: its tokens stop working)
  reloadAt = Date.now()
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data'), { roStatus: 'revoked', rwScopes: 'exchange:live.read', rwOrganization: 'org_other' }))
  const lostOrg = await rwLiveClosed
  t.equal(lostOrg.code, 1008)
  t.ok(lostOrg.at - reloadAt < CLOSE_BOUND_MS, `organization change closed ${lostOrg.at - reloadAt} ms after the reload`)
})

t.test('a reload that removes the route\'s block closes with 1001', async (t) => {
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data')))
  // Wait for the restored config (a fresh token works again).
  const ws = await waitFor(async () => open('/events/again', await tokenFor('pricing-ro', 'demo-content-secret')), { what: 'the restored config to apply (pricing-ro upgrades again)', intervalMs: 50 })
  const closed = closeOf(ws)
  const reloadAt = Date.now()
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data'), { withProxy: false }))
  const gone = await closed
  t.same([gone.code, gone.reason], [1001, 'route no longer served'])
  t.ok(gone.at - reloadAt < CLOSE_BOUND_MS, `closed ${gone.at - reloadAt} ms after the reload`)
})

t.test('a reload while the upstream handshake is under way: the connection is rechecked when it is accepted', async (t) => {
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data')))
  const roToken = await waitFor(async () => {
    const token = await tokenFor('pricing-ro', 'demo-content-secret')
    ;(await open('/events/ready', token)).terminate()
    return token
  }, { what: 'the restored config to apply (pricing-ro upgrades again)', intervalMs: 50 })
  const reloadsBefore = (gateway.output().match(/config reloaded/g) ?? []).length
  // The caller's upgrade has passed the chain; the upstream holds its 101 while the account is revoked.
  const opening = open('/events/held', roToken)
  await waitFor(() => lane.held.length > 0, { what: 'the upstream to receive the held handshake' })
  await rewriteAndReload(gateway, file, config(lane, key, join(dir, 'data'), { roStatus: 'revoked' }))
  await waitFor(() => (gateway.output().match(/config reloaded/g) ?? []).length > reloadsBefore, { what: 'the revoking reload to apply' })
  const release = lane.held.shift() as () => void
  release()
  const ws = await opening
  const stillOpen = { code: 0, reason: `still open ${CLOSE_BOUND_MS} ms after it was accepted`, at: 0 }
  // A bound, so the missing recheck fails here rather than at tap's timeout (unref'd: it holds nothing open).
  const closed = await Promise.race([closeOf(ws), new Promise<typeof stillOpen>((resolve) => { setTimeout(resolve, CLOSE_BOUND_MS, stillOpen).unref() })])
  ws.terminate()
  t.same([closed.code, closed.reason], [1008, 'unauthenticated'], 'accepted after the swap its upgrade did not see: closed at once')
})

t.test('SIGTERM closes every WebSocket with 1001 at once, not at the end of the grace period, then the process exits', async (t) => {
  const token = await tokenFor('pricing-rw', 'demo-exchange-secret')
  const sockets = await Promise.all([1, 2, 3].map((i) => open(`/v1/stores/org_store_1/live/s${i}`, token)))
  const closes = sockets.map(closeOf)
  const signalled = Date.now()
  gateway.child.kill('SIGTERM')
  const closed = await Promise.all(closes)
  t.same(closed.map((c) => [c.code, c.reason]), [1, 2, 3].map(() => [1001, 'server shutting down']))
  const took = Math.max(...closed.map((c) => c.at)) - signalled
  t.ok(took < GRACE_MS / 2, `at SIGTERM, not when the ${GRACE_MS} ms grace period ends (${took} ms)`)
  t.equal(await gateway.exited, 0)
})
