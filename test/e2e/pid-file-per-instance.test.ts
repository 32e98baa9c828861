import { readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { waitForText } from '../helpers/wait-for.js'

/**
 * Two gateways on one data_dir (what `npm run cluster` runs) used to both write data_dir/lanegate.pid, so
 * `lanegate stop` reached one. With LANEGATE_PID_FILE each has its own file, and `lanegate stop` stops the one
 * named. The "signal pid" line carries `pid` once (pino's own), not twice.
 */
t.test('each gateway writes the pid file LANEGATE_PID_FILE names; lanegate stop with it stops that one only', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-pids-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const files = [join(dir, 'gw-1.pid'), join(dir, 'gw-2.pid')]
  const gateways = await Promise.all(files.map((file) => spawnGateway({ env: { LANEGATE_DATA_DIR: join(dir, 'data'), LANEGATE_PID_FILE: file } })))
  t.teardown(async () => {
    for (const g of gateways) if (g.child.exitCode === null) g.child.kill('SIGTERM')
    await Promise.all(gateways.map((g) => g.exited))
  })
  for (const [i, g] of gateways.entries()) {
    // The file is written, and the line logged, right after the listening line spawnGateway waits for.
    const line = (await waitForText(g.output, /^.*"msg":"signal pid[^\n]*\n/m, { what: 'the signal pid line' })).trim()
    t.equal(await readFile(files[i] as string, 'utf8'), `${g.child.pid}\n`)
    t.equal(line.match(/"pid":/g)?.length, 1, 'one pid key in the signal line')
    t.same(JSON.parse(line).pid_file, files[i])
  }
  const stopped = await runNode(repoPath('bin/lanegate.js'), ['stop', '--config', repoPath('gateway.yaml')], { env: { LANEGATE_DATA_DIR: join(dir, 'data'), LANEGATE_PID_FILE: files[0] } })
  t.same({ code: stopped.code, stdout: stopped.stdout }, { code: 0, stdout: `stop: sent SIGTERM to pid ${gateways[0]?.child.pid}\n` })
  t.equal(await gateways[0]?.exited, 0)
  t.equal(gateways[1]?.child.exitCode, null, 'the other one still runs')
  t.equal((await fetch(`${gateways[1]?.base}/healthz`)).status, 200)
})
