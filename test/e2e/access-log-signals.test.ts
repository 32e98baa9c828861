import { mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/** `lanegate start` on the demo config with `access_log` set to `accessLog`. */
async function startWithAccessLog (t: Test, accessLog: unknown): Promise<SpawnedGateway> {
  // At info (the helper reads the listening line); test/app/access-log.test.ts shows the lines come at warn too.
  return (await gatewayFixture().set('access_log', accessLog).start(t)).gateway
}

const get = async (url: string): Promise<void> => { await (await fetch(url)).arrayBuffer() }

const linesIn = async (path: string): Promise<Record<string, unknown>[]> =>
  (await readFile(path, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)

t.test('SIGUSR1 reopens the access-log file after an outside logrotate moved it; SIGTERM writes out the last lines', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-access-e2e-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'access.log')
  const gateway = await startWithAccessLog(t, { fields: ['path', 'status'], sinks: [{ type: 'file', path }] })
  await get(`${gateway.base}/healthz?n=1`)
  await waitFor(async () => (await linesIn(path)).length === 1, { what: 'the first access line' })
  // What logrotate does: move the file, then signal the gateway (postrotate).
  await rename(path, `${path}.1`)
  await get(`${gateway.base}/healthz?n=2`)
  await waitFor(async () => (await linesIn(`${path}.1`)).length === 2, { what: 'the second line, in the moved file still open' })
  gateway.child.kill('SIGUSR1')
  // The signal is handled asynchronously: ask until a line lands in a new file at the path.
  let n = 3
  await waitFor(async () => {
    await get(`${gateway.base}/healthz?n=${n++}`)
    return (await linesIn(path)).length > 0
  }, { what: 'a line in a new file at the path after SIGUSR1' })
  t.equal(gateway.child.exitCode, null, 'SIGUSR1 does not stop the gateway')
  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0)
  const moved = await linesIn(`${path}.1`)
  const current = await linesIn(path)
  // The lines before the signal are in the moved file; one asked for while the signal was being handled may be too.
  t.same(moved.slice(0, 2), [{ path: '/healthz?n=1', status: 200 }, { path: '/healthz?n=2', status: 200 }])
  t.same([...moved, ...current].map((l) => l.path), Array.from({ length: n - 1 }, (_, i) => `/healthz?n=${i + 1}`), 'every request has its line, once, in order')
})

t.test('the stdout sink writes access lines beside the log lines', async (t) => {
  const gateway = await startWithAccessLog(t, { fields: ['method', 'path', 'status'], sinks: [{ type: 'stdout' }] })
  await get(`${gateway.base}/healthz?from=stdout`)
  await waitFor(() => gateway.output().includes('"path":"/healthz?from=stdout"'), { what: 'the access line on stdout' })
  const line = gateway.output().split('\n').find((l) => l.includes('"path":"/healthz?from=stdout"'))
  t.same(JSON.parse(line ?? '{}'), { method: 'GET', path: '/healthz?from=stdout', status: 200 })
  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0)
})
