import { once } from 'node:events'
import { request, type IncomingMessage } from 'node:http'
import { setTimeout as after } from 'node:timers/promises'
import t from 'tap'
import { callUpstream } from '../../src/upstream/call.js'
import { deadPort, startBackend, startRelay, testSettings, testUpstream } from '../helpers/upstream-servers.js'

const RETRY = { attempts: 2, methods: ['GET', 'HEAD', 'OPTIONS'] }

t.test('a relayed GET refused by one target is retried on the other, and the caller sees one answer', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], { retry: RETRY }))
  const base = await startRelay(t, upstream)
  const answers: Array<[number, string]> = []
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${base}/items?x=${i}`)
    answers.push([res.status, await res.text()])
  }
  t.same(answers, [[200, 'b'], [200, 'b'], [200, 'b'], [200, 'b']])
  t.same(b.seen.map((r) => r.url), ['/items?x=0', '/items?x=1', '/items?x=2', '/items?x=3'])
})

t.test('a relayed GET that times out on one target is retried on the other', async (t) => {
  const stall = await startBackend(t, 'stall')
  stall.handle(() => {})
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([stall.url, b.url], {
    retry: RETRY,
    timeouts: { connect_ms: 1000, response_ms: 200, body_idle_ms: 1000 },
  }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/slow`)
  t.same([res.status, await res.text()], [200, 'b'])
  t.equal(stall.seen.length, 1)
})

t.test('a relayed POST is never retried: the refusal answers 502 although another target is up', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], { retry: { attempts: 3, methods: ['GET', 'HEAD', 'OPTIONS', 'POST'] } }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/orders`, { method: 'POST', body: '{"n":1}', headers: { 'content-type': 'application/json' } })
  t.equal(res.status, 502)
  t.same(await res.json(), { error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', upstream_body: '', message: 'The upstream service could not be reached.' })
  t.equal(b.seen.length, 0, 'the other target never saw the POST')
})

t.test('a POST through callUpstream is not retried when POST is not a retry method', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], { retry: RETRY }))
  const failure = await callUpstream(upstream, { method: 'POST', path: '/x', body: '{}', timeoutMs: 1000, maxBodyBytes: 64, maxErrorBodyBytes: 64 })
    .then(() => undefined, (error: { status: number, fields: unknown }) => ({ status: error.status, fields: error.fields }))
  t.same(failure, { status: 502, fields: { upstream_status: 0, upstream_failure: 'refused', upstream_body: '' } })
  t.equal(b.seen.length, 0)
})

t.test('a GET through callUpstream is retried on the other target', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], { retry: RETRY }))
  const answer = await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 1000, maxBodyBytes: 64, maxErrorBodyBytes: 64 })
  t.same([answer.status, answer.body], [200, 'b'])
})

t.test('a retry never follows bytes sent to the caller: a target that breaks off mid-body cuts the caller off', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  a.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('part one\n')
    setTimeout(() => res.socket?.destroy(), 50)
  })
  const upstream = testUpstream(t, testSettings([a.url, b.url], { retry: RETRY }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/stream`)
  t.equal(res.status, 200)
  await t.rejects(res.text(), 'the caller sees a cut response')
  t.equal(b.seen.length, 0, 'nothing was retried')
})

t.test('retries stop after `attempts`: three dead targets with attempts 2 answer 502 after two tries', async (t) => {
  const ports = [await deadPort(), await deadPort(), await deadPort()]
  const upstream = testUpstream(t, testSettings(ports.map((p) => `http://127.0.0.1:${p}`), { retry: RETRY, health: { passive: { failures: 1, eject_seconds: 30 } } }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/x`)
  t.equal(res.status, 502)
  t.same((await res.json() as { upstream_failure: string }).upstream_failure, 'refused')
  t.same(upstream.targets.map((target) => target.ejected), [true, true, false], 'two targets tried, each ejected')
})

t.test('a caller that leaves while its GET waits on the retry target drops that upstream request at once', async (t) => {
  const port = await deadPort()
  const held = await startBackend(t, 'held')
  const arrived = new Promise<IncomingMessage>((resolve) => { held.handle((req) => { resolve(req) }) })
  // The attempt's own clock would drop it only after 10 s: a drop within 1 s is the caller's leaving, passed on.
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, held.url], {
    retry: RETRY,
    timeouts: { connect_ms: 1000, response_ms: 10_000, body_idle_ms: 10_000 },
  }))
  const base = await startRelay(t, upstream)
  const caller = request(`${base}/wait`)
  caller.on('error', () => {})
  caller.end()
  const req = await arrived
  const dropped = once(req.socket, 'close').then(() => 'dropped')
  caller.destroy()
  const outcome = await Promise.race([dropped, after(1000, 'still open')])
  t.same([outcome, held.seen.map((r) => r.url), upstream.targets.map((target) => target.inFlight)], ['dropped', ['/wait'], [0, 0]])
})

t.test('a retried GET names the target it is retried on in Host', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], { retry: RETRY }))
  const base = await startRelay(t, upstream)
  const res = await fetch(`${base}/items`)
  t.same([res.status, await res.text(), b.seen.map((r) => r.headers.host)], [200, 'b', [new URL(b.url).host]])
})
