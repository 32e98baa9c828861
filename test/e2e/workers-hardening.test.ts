import { request as httpRequest } from 'node:http'
import t from 'tap'
import { freePort, spawnGateway, startGatewayProcess } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { exitWithin, letTimePass, waitFor, waitForText } from '../helpers/wait-for.js'

/**
 * The primary of `server.workers: 2` gets the single process's hardening (issue 15): a worker that cannot start
 * ends the primary (no endless restarts), and SIGHUP while the workers drain neither kills nor reloads it.
 */

t.test('workers: 2 with Redis on a closed port: the primary exits 1 after startup_timeout_ms, with the worker\'s line', async (t) => {
  const closed = await freePort()
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('server.startup_timeout_ms', 1500)
    .set('server.workers', 2)
    .set('rate_limit_store.driver', 'redis')
    .set('rate_limit_store.redis_url', `redis://127.0.0.1:${closed}`)
    .write()
  t.teardown(() => cfg.remove())
  const started = Date.now()
  const gw = startGatewayProcess({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  // Generous margin: the primary and then each worker load and compile the config on a shared, busy machine
  // (1 s of CPU took 10–20 s beside stress-ng); a primary restarting workers forever would never exit.
  const code = await exitWithin(gw.exited, 1500 * 10 + 60_000)
  t.equal(code, 1, `the primary exited 1 after ${Date.now() - started} ms (not restarting workers forever)`)
  t.match(gw.errors(), new RegExp(`cannot start: the rate-limit Redis \\(rate_limit_store\\.redis_url\\) at 127\\.0\\.0\\.1:${closed} not reachable`))
  // 'exit' can come before the last of stdout is read: wait for the line.
  await waitForText(gw.output, '"msg":"a worker could not start: stopping"', { what: 'the primary to log why it stops' })
  t.match(gw.output(), /"msg":"a worker could not start: stopping"/)
})

t.test('workers: 2, SIGTERM then SIGHUP to the primary: the drain goes on and the primary exits 0 (not killed by SIGHUP)', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.shutdown_grace_ms', 2000).set('server.workers', 2).write()
  t.teardown(() => cfg.remove())
  // At debug: a request still in flight is logged ("incoming request"); at info only completed ones are.
  const gw = await spawnGateway({ config: cfg.file, env: { LANEGATE_LOG_LEVEL: 'debug' } })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  // Both workers listening before the signal (the second may still be booting when the first logs).
  await waitFor(() => (gw.output().match(/Server listening at/g) ?? []).length >= 2, { what: 'both workers listening' })
  // A token request whose body never finishes keeps a worker draining for the whole grace period.
  const hanging = httpRequest(`${gw.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1000' } })
  hanging.on('error', () => {})
  hanging.write('grant_type=')
  await waitForText(gw.output, /"url":"\/oauth\/token"[^\n]*"msg":"incoming request"/, { what: 'a worker to log the hanging request' })
  gw.child.kill('SIGTERM')
  await waitForText(gw.output, 'shutting down: finishing in-flight requests', { what: 'the workers to begin draining' })
  gw.child.kill('SIGHUP')
  // Not dying of SIGHUP is an absence: a pause for a death to show (a signal kills at once).
  await letTimePass(300)
  t.equal(gw.child.signalCode, null, 'SIGHUP did not kill the primary')
  // The drain takes the 2 s grace period (the request never finishes); 10 × that tells "drained" from "stuck".
  const code = await exitWithin(gw.exited, 2000 * 10)
  t.equal(code, 0, 'the primary exited 0 once the workers had drained')
  t.equal(gw.child.signalCode, null)
  t.notMatch(gw.output(), /every worker reloads/, 'no reload while stopping')
  hanging.destroy()
})
