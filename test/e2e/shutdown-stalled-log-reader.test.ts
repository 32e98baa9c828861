import { request as httpRequest } from 'node:http'
import { createInterface } from 'node:readline'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnPlainNode } from '../helpers/plain-node.js'
import { freePort } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'

function get (url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(url, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) })
    req.on('error', () => resolve(-1))
    req.end()
  })
}

// Issue 27: a parent (a Node supervisor, a log shipper) spawns `lanegate start` with stdout and stderr as the
// pipes child_process.spawn makes (UNIX sockets, blocking on the child's side) and then never reads them. The
// gateway's log writes filled them; a write blocked in a thread-pool thread, and the process's exit waited on
// that thread for good: SIGTERM left it running until SIGKILL.
t.test('SIGTERM with stdout and stderr spawn pipes nobody reads, full of request logs: exit 0 within grace + 2 s', async (t) => {
  const grace = 2000
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.shutdown_grace_ms', grace).write()
  t.teardown(() => cfg.remove())
  const port = await freePort()
  // A plain node supervisor (see plain-node.ts: not under this runner's hooks, which hide the fault).
  const supervisor = spawnPlainNode([
    repoPath('dist/test/e2e/fixtures/unread-pipes-supervisor.js'),
    repoPath('bin/lanegate.js'), 'start', '--config', cfg.file, '--port', String(port), '--host', '127.0.0.1',
  ], { LANEGATE_LOG_LEVEL: 'info', LANEGATE_ADMIN_PORT: '0' }, ['pipe', 'pipe', 'inherit'])
  if (supervisor.stdout === null || supervisor.stdin === null) throw new Error('no supervisor pipes')
  const lines = createInterface({ input: supervisor.stdout })[Symbol.asyncIterator]()
  const pid = Number(/^pid (\d+)$/.exec(String((await lines.next()).value))?.[1])
  t.teardown(() => {
    try { process.kill(pid, 'SIGKILL') } catch {}
    supervisor.kill('SIGKILL')
  })

  await waitFor(async () => await get(`http://127.0.0.1:${port}/healthz`) === 200, { what: `lanegate to answer /healthz on port ${port}`, intervalMs: 100 })
  // /healthz is not logged; an unknown path logs its URL twice (incoming, completed): 700 of them with a 2 KB query
  // write ~3 MB, far more than the socket buffers (a few hundred KB) hold.
  const pad = 'x'.repeat(2000)
  let answered = 0
  for (let batch = 0; batch < 35; batch++) {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get(`http://127.0.0.1:${port}/no-such-route?pad=${pad}`)))
    answered += statuses.filter((s) => s === 404).length
  }
  t.equal(answered, 700, 'the gateway serves while its log pipes are full')
  supervisor.stdin.write('term\n')
  // An exit held by a blocked write would never come: 10 × (grace + 2 s) tells "ended" from "stuck" on any machine.
  const bound = 10 * (grace + 2000)
  let deadline: NodeJS.Timeout | undefined
  const ended = await Promise.race([
    lines.next().then((line) => String(line.value)),
    new Promise<string>((resolve) => { deadline = setTimeout(() => resolve('still running'), bound) }),
  ]).finally(() => clearTimeout(deadline))
  const m = /^exit (\S+) (\S+) (\d+)$/.exec(ended)
  t.ok(m !== null, `the gateway ended (${ended})`)
  t.same({ code: m?.[1], signal: m?.[2] }, { code: '0', signal: 'null' }, 'exit 0, not killed by a signal')
  t.ok(Number(m?.[3]) < bound, `within 10 × (grace + 2 s) (${m?.[3]} ms after SIGTERM; grace + 2 s on an idle machine)`)
})
