import t from 'tap'
import { callUpstream, type CallInput } from '../../src/upstream/call.js'
import { deadPort, startBackend, testSettings, testUpstream } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

const GET: CallInput = { method: 'GET', path: '/', timeoutMs: 2000, maxBodyBytes: 1024, maxErrorBodyBytes: 64 }

async function outcome (promise: Promise<{ body: string }>): Promise<string> {
  try {
    return (await promise).body
  } catch (error) {
    return `failed:${String((error as { fields?: { upstream_failure?: string } }).fields?.upstream_failure)}`
  }
}

t.test('passive health: N failures in a row eject a target for S seconds, then it returns', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], {
    health: { passive: { failures: 2, eject_seconds: 0.5 } },
  }))
  const before: string[] = []
  for (let i = 0; i < 4; i++) before.push(await outcome(callUpstream(upstream, GET)))
  t.same(before, ['failed:refused', 'b', 'failed:refused', 'b'], 'two failures on a, then it is ejected')
  const ejected: string[] = []
  for (let i = 0; i < 6; i++) ejected.push(await outcome(callUpstream(upstream, GET)))
  t.same(ejected, Array(6).fill('b'), 'while ejected, a gets nothing')
  t.equal(upstream.targets[0]?.ejected, true)

  // a comes back on the same port; after the ejection window it is picked again.
  const a = await startBackend(t, 'a', port)
  await waitFor(() => upstream.targets[0]?.ejected === false, { what: 'the 0.5 s ejection of a to end' })
  const after: string[] = []
  for (let i = 0; i < 4; i++) after.push(await outcome(callUpstream(upstream, GET)))
  t.same(after.sort(), ['a', 'a', 'b', 'b'])
  t.equal(a.seen.length, 2)
})

t.test('passive health: a target back on probation is ejected again by one failure', async (t) => {
  const port = await deadPort()
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([`http://127.0.0.1:${port}`, b.url], {
    health: { passive: { failures: 3, eject_seconds: 0.3 } },
  }))
  for (let i = 0; i < 6; i++) await outcome(callUpstream(upstream, GET))
  t.equal(upstream.targets[0]?.ejected, true, 'ejected after 3 failures')
  await waitFor(() => upstream.targets[0]?.ejected === false, { what: 'the 0.3 s ejection to end (probation)' })
  const probation: string[] = []
  for (let i = 0; i < 4; i++) probation.push(await outcome(callUpstream(upstream, GET)))
  t.same(probation.sort(), ['b', 'b', 'b', 'failed:refused'], 'one failure on probation ejects it again')
  t.equal(upstream.targets[0]?.ejected, true)
})

t.test('every target ejected: 502 ejected at once, nothing sent', async (t) => {
  const stall = await startBackend(t, 'stall')
  stall.handle(() => {}) // accepts and never answers
  const upstream = testUpstream(t, testSettings([stall.url], {
    timeouts: { connect_ms: 1000, response_ms: 30_000, body_idle_ms: 30_000 },
    health: { passive: { failures: 1, eject_seconds: 30 } },
  }))
  t.equal(await outcome(callUpstream(upstream, { ...GET, timeoutMs: 200 })), 'failed:timeout')
  const started = Date.now()
  let caught: unknown
  try {
    await callUpstream(upstream, { ...GET, timeoutMs: 30_000 })
  } catch (error) {
    caught = error
  }
  // Sent to the stalled target, the request would wait its 30 s timeout; refused at once, it takes milliseconds.
  // The bound sits halfway, so a loaded machine cannot fail it and a request that was sent cannot pass it.
  const elapsed = Date.now() - started
  t.ok(elapsed < 15_000, `answered in ${elapsed} ms, without waiting for the 30 s timeout`)
  t.same({ status: (caught as { status: number }).status, code: (caught as { code: string }).code, fields: (caught as { fields: unknown }).fields, message: (caught as Error).message }, {
    status: 502,
    code: 'upstream_error',
    fields: { upstream_status: 0, upstream_failure: 'ejected', upstream_body: '' },
    message: 'The upstream service has no healthy target.',
  })
  t.equal(stall.seen.length, 1, 'only the first request reached the target')
})

t.test('active health: a target failing its probe is ejected until a probe passes', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  let aHealthy = false
  a.handle((req, res) => {
    if (req.url === '/base/health') res.writeHead(aHealthy ? 200 : 503).end()
    else res.end('a')
  })
  b.handle((req, res) => { res.end(req.url === '/health' ? '' : 'b') })
  const upstream = testUpstream(t, testSettings([`${a.url}/base`, b.url], {
    health: { active: { path: '/health', interval_seconds: 0.1 } },
  }))
  await waitFor(() => upstream.targets[0]?.ejected === true, { what: 'a failing probe to eject a' })
  const down: string[] = []
  for (let i = 0; i < 4; i++) down.push(await outcome(callUpstream(upstream, GET)))
  t.same(down, ['b', 'b', 'b', 'b'])
  t.ok(a.seen.some((r) => r.url === '/base/health'), 'probes go below the target base path')
  aHealthy = true
  await waitFor(() => upstream.targets[0]?.ejected === false, { what: 'a passing probe to bring a back' })
  const up: string[] = []
  for (let i = 0; i < 4; i++) up.push(await outcome(callUpstream(upstream, GET)))
  t.same(up.sort(), ['a', 'a', 'b', 'b'])
})

t.test('one of two targets killed under load: GETs keep answering 200 (retried, then the target is ejected)', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([a.url, b.url], {
    retry: { attempts: 2, methods: ['GET', 'HEAD', 'OPTIONS'] },
    health: { passive: { failures: 2, eject_seconds: 30 } },
  }))
  const outcomes: string[] = []
  let running = true
  const workers = Array.from({ length: 8 }, async () => {
    while (running) outcomes.push(await outcome(callUpstream(upstream, GET)))
  })
  await waitFor(() => outcomes.includes('a') && outcomes.includes('b'), { what: 'both targets to answer under load' })
  await a.close()
  const killedAt = outcomes.length
  await waitFor(() => upstream.targets[0]?.ejected === true, { what: 'the killed target to be ejected' })
  const ejectedAt = outcomes.length
  await waitFor(() => outcomes.length > Math.max(ejectedAt + 10, killedAt + 20), { what: 'more than 20 requests after the kill, 10 of them after the ejection' })
  running = false
  await Promise.all(workers)
  const after = outcomes.slice(killedAt)
  t.ok(after.length > 20, `${after.length} requests after the kill`)
  t.same(after.filter((o) => o !== 'a' && o !== 'b'), [], 'no failed GET after the kill')
  t.equal(upstream.targets[0]?.ejected, true, 'the killed target is ejected')
  t.same(after.slice(-10), Array(10).fill('b'))
})

t.test('active health: turned on by reconcile, and stopped by close', async (t) => {
  const a = await startBackend(t, 'a')
  const settings = testSettings([a.url])
  const upstream = testUpstream(t, settings)
  // No probe is an absence: it is checked once a probed upstream beside it, on the same 50 ms interval, has
  // probed four more times, three intervals at least (its timers run in this event loop: a late loop delays both).
  const control = await startBackend(t, 'control')
  testUpstream(t, testSettings([control.url], { health: { active: { path: '/ping', interval_seconds: 0.05 } } }))
  const intervalsPass = (n: number): Promise<unknown> => {
    const from = control.seen.length
    return waitFor(() => control.seen.length >= from + n, { what: `${n} probes of the upstream beside it` })
  }
  await intervalsPass(4)
  t.equal(a.seen.length, 0, 'no probes without active health')
  upstream.reconcile({ ...settings, health: { active: { path: '/ping', interval_seconds: 0.05 } } })
  await waitFor(() => a.seen.length >= 2, { what: 'two probes' })
  t.same(a.seen.slice(0, 2).map((r) => `${r.method} ${r.url}`), ['GET /ping', 'GET /ping'])
  await upstream.close()
  const probes = a.seen.length
  await intervalsPass(4)
  t.equal(a.seen.length, probes, 'no probe after close')
})
