import { request as httpRequest } from 'node:http'
import t from 'tap'
import { freePort, spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { exitWithin, letTimePass, waitFor, waitForText } from '../helpers/wait-for.js'

/**
 * A token request whose body never finishes: in flight until request_timeout_ms (30 s in gateway.yaml). It asks
 * `Expect: 100-continue`, so the server's "100 Continue" says it has read the head: `sent` resolves then, once the
 * first bytes of the body follow — an event even when the gateway's stdout (its log) is a pipe nobody reads.
 */
function hangingRequest (base: string): { req: ReturnType<typeof httpRequest>, sent: Promise<void> } {
  const req = httpRequest(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1000', expect: '100-continue' } })
  req.on('error', () => {})
  const sent = new Promise<void>((resolve) => { req.once('continue', () => { req.write('grant_type=', () => { resolve() }) }) })
  req.flushHeaders()
  return { req, sent }
}

/** Waits until the gateway has the hanging request in hand (its "100 Continue", then the first bytes sent). */
async function arrived (hanging: { sent: Promise<void> }): Promise<void> {
  await waitFor(() => hanging.sent.then(() => true), { what: 'the gateway to take the hanging request (100 Continue)' })
}

function get (url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(url, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) })
    req.on('error', () => resolve(-1))
    req.end()
  })
}

t.test('SIGHUP reloads the config and the gateway keeps serving (it is not a stop signal)', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  t.same(await (await fetch(`${gw.base}/healthz`)).json(), { status: 'ok', config_version: 1 })
  // An edit plus SIGHUP at once: the file watcher polls too, so either may apply it; what matters is that the
  // process stays up and serves the new version.
  await cfg.write(gatewayFixture().set('server.data_dir', './data').set('server.keep_alive_timeout_ms', 6000))
  gw.child.kill('SIGHUP')
  await waitFor(async () => (await (await fetch(`${gw.base}/healthz`)).json() as { config_version: number }).config_version === 2, { what: 'config version 2' })
  t.equal(await exitWithin(gw.exited, 0), 'running', 'the process is still running after SIGHUP')
  t.same(await (await fetch(`${gw.base}/healthz`)).json(), { status: 'ok', config_version: 2 })
  gw.child.kill('SIGHUP')
  // Not stopping is an absence: a second for a stop to show (a stop signal is handled at once).
  t.equal(await exitWithin(gw.exited, 1000), 'running', 'a second SIGHUP does not stop it either')
  t.notMatch(gw.output(), /shutting down/)
  await waitForText(gw.output, 'config reloaded', { what: 'the reload to be logged' })
  t.match(gw.output(), /config reloaded/)
})

t.test('SIGTERM with stdout a full pipe nobody reads: the drain still ends within shutdown_grace_ms + margin', async (t) => {
  const grace = 2000
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.shutdown_grace_ms', grace).write()
  t.teardown(() => cfg.remove())
  const port = await freePort()
  const gw = await spawnGateway({ config: cfg.file, port, unreadStdout: true })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  // Each request logs two info lines: 600 requests write far more than a pipe holds (64 KiB on Linux).
  let answered = 0
  for (let batch = 0; batch < 30; batch++) {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get(`${gw.base}/healthz`)))
    answered += statuses.filter((s) => s === 200).length
  }
  t.equal(answered, 600, 'the gateway serves while its log pipe is full')
  const hanging = hangingRequest(gw.base)
  await arrived(hanging)
  const started = Date.now()
  gw.child.kill('SIGTERM')
  // A drain stuck on the full pipe would never end: 10 × the grace period tells "ended" from "stuck" on any machine.
  const code = await exitWithin(gw.exited, grace * 10)
  const took = Date.now() - started
  t.not(code, 'running', `the process exited (after ${took} ms)`)
  t.ok(took >= grace - 100, `the in-flight request had its grace period (${took} ms)`)
  t.ok(took < grace * 10, `the drain ended within 10 × the grace period (${took} ms)`)
  hanging.req.destroy()
})

t.test('a second SIGTERM during a drain exits at once', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.shutdown_grace_ms', 30000).write()
  t.teardown(() => cfg.remove())
  const port = await freePort()
  const gw = await spawnGateway({ config: cfg.file, port, unreadStdout: true })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  for (let i = 0; i < 600; i += 20) await Promise.all(Array.from({ length: 20 }, () => get(`${gw.base}/healthz`)))
  // An in-flight request that never finishes keeps the first drain waiting for the whole 30 s grace period.
  const hanging = hangingRequest(gw.base)
  await arrived(hanging)
  gw.child.kill('SIGTERM')
  // Waiting is an absence, and with stdout unread no line says the drain began: a pause for an exit to show.
  await letTimePass(300)
  t.equal(await exitWithin(gw.exited, 0), 'running', 'the first SIGTERM waits for the in-flight request')
  const started = Date.now()
  gw.child.kill('SIGTERM')
  // "At once" against the 30 s grace period: half of it tells them apart on a loaded machine.
  const code = await exitWithin(gw.exited, 15_000)
  t.equal(code, 1, `the second signal ends the process at once (${Date.now() - started} ms), exit code 1`)
  hanging.req.destroy()
})

t.test('SIGINT then SIGINT: same as SIGTERM (stdout read)', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.shutdown_grace_ms', 30000).write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  const hanging = hangingRequest(gw.base)
  await arrived(hanging)
  gw.child.kill('SIGINT')
  await waitForText(gw.output, 'shutting down: finishing in-flight requests', { what: 'the drain to begin' })
  t.equal(await exitWithin(gw.exited, 0), 'running')
  gw.child.kill('SIGINT')
  t.equal(await exitWithin(gw.exited, 15_000), 1)
  // 'exit' can come before the last of stdout is read: wait for the line.
  await waitForText(gw.output, 'second stop signal', { what: 'the second signal to be logged' })
  t.match(gw.output(), /second stop signal/)
  hanging.req.destroy()
})

t.test('SIGHUP during a drain neither stops the process nor reloads: the drain ends as planned, exit 0', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.shutdown_grace_ms', 2000).write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  const hanging = hangingRequest(gw.base)
  await arrived(hanging)
  gw.child.kill('SIGTERM')
  await waitForText(gw.output, 'shutting down: finishing in-flight requests', { what: 'the drain to begin' })
  gw.child.kill('SIGHUP')
  // Not stopping and not reloading are absences: a pause for either to show (both would happen at once).
  await letTimePass(300)
  t.equal(await exitWithin(gw.exited, 0), 'running', 'SIGHUP did not end the draining process')
  t.equal(await exitWithin(gw.exited, 2000 * 10), 0, 'the drain ended after the grace period, exit 0')
  t.equal(gw.child.signalCode, null)
  t.notMatch(gw.output(), /config reloaded/)
  hanging.req.destroy()
})
