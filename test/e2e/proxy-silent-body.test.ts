import t from 'tap'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { rawHttpTarget } from '../helpers/raw-http-target.js'
import { send } from '../helpers/exchange-http.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

// The relay's timers on a real `lanegate start`: they are unrefed (the sockets hold the process open) and the body
// idle timer is armed a microtask after the answer's head (an answer that came whole in its first read needs none).
// A target that sends its head, with or without the first bytes, and then nothing must still be cut off after
// body_idle_ms, and a target that never answers must still time out after response_ms, in a process nothing else
// keeps busy.

/** `/prices/head-and-part` writes the head and the first bytes of a longer body in one write, then nothing;
 * `/prices/head-only` writes only the head; `/prices/never` is read and never answered. */
function silentTarget (): ReturnType<typeof rawHttpTarget> {
  return rawHttpTarget((path, socket) => {
    if (path.endsWith('/head-and-part')) socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\npartial')
    else if (path.endsWith('/head-only')) socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\n')
  })
}

async function timed<T> (call: () => Promise<T>): Promise<{ res: T, ms: number }> {
  const started = Date.now()
  const res = await call()
  return { res, ms: Date.now() - started }
}

t.test('a real gateway cuts off a silent answer body after body_idle_ms and times out a silent target after response_ms', async (t) => {
  const target = await silentTarget()
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('services.pricing.upstream.targets', [`http://127.0.0.1:${target.port}`])
    .set('services.pricing.upstream.timeouts', { connect_ms: 1000, response_ms: 700, body_idle_ms: 700 })
    .set('services.pricing.upstream.retry.attempts', 1)
    .write()
  const gateway = await spawnGateway({ config: cfg.file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await Promise.all([cfg.remove(), target.close()])
  })
  const token = await fetchGatewayToken(gateway.base, 'demo-pricing')
  const headers = { authorization: `Bearer ${token}` }

  // Its first body bytes were relayed, then silence: the caller's connection is cut, never a complete-looking answer.
  const part = await timed(() => send(gateway.base, { path: '/legacy/pricing/prices/head-and-part', headers }))
  t.same([part.res.status, part.res.aborted, part.res.body], [200, true, 'partial'], 'head and first bytes relayed, then cut off')
  // Not before body_idle_ms (no timer fired early), and not never (one was armed); loose, for a loaded machine.
  t.ok(part.ms >= 600 && part.ms < 15_000, `cut after ${part.ms} ms (body_idle_ms 700)`)
  // A head and no byte of its body: nothing was relayed yet, so the caller gets the documented 502 `reset`
  // ("before the first body byte was relayed", docs/errors.md), once the body was silent for body_idle_ms.
  const bare = await timed(() => send(gateway.base, { path: '/legacy/pricing/prices/head-only', headers }))
  t.same([bare.res.status, bare.res.aborted, (JSON.parse(bare.res.body) as { upstream_failure?: string }).upstream_failure], [502, false, 'reset'], 'a silent body before its first byte: 502 reset')
  t.ok(bare.ms >= 600 && bare.ms < 15_000, `answered after ${bare.ms} ms (body_idle_ms 700)`)
  const never = await timed(() => send(gateway.base, { path: '/legacy/pricing/prices/never', headers }))
  t.same([never.res.status, (JSON.parse(never.res.body) as { upstream_failure?: string }).upstream_failure], [502, 'timeout'], 'a target that never answers: 502 timeout')
  t.ok(never.ms >= 600 && never.ms < 15_000, `timed out after ${never.ms} ms (response_ms 700)`)
  t.equal(gateway.child.exitCode, null, 'the gateway still runs')
  const health = await fetch(`${gateway.base}/healthz`)
  t.equal(health.status, 200)
})
