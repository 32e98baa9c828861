import { openSync, closeSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnPlainNode } from '../helpers/plain-node.js'
import { freePort } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * A real `lanegate start` keeps node's tick objects on their fast path after a full GC on an idle turn (what V8's
 * memory reducer runs after traffic): src/node-tuning/tick-object-shape.ts. The process runs with a probe
 * (test/fixtures/v8/tick-feedback-probe.cjs) that runs the GC on a first SIGUSR2 and prints process.nextTick's
 * feedback on a second; test/unit/tick-object-shape.test.ts reads the same feedback without the hold. A plain node
 * (plain-node.ts): this runner's exit hooks lose V8's print, which C's stdio holds until the process exits. Its
 * stdout is a file: a pipe is non-blocking in node, and C's stdio dropped the print when the pipe was full.
 */
t.test('after authenticated GETs, an idle full GC and more GETs, the tick object literal\'s keys are monomorphic', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-tick-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const outFile = join(dir, 'stdout.txt')
  const out = openSync(outFile, 'w')
  const child = spawnPlainNode(
    ['--expose-gc', '--allow-natives-syntax', '--require', repoPath('test/fixtures/v8/tick-feedback-probe.cjs'),
      repoPath('bin/lanegate.js'), 'start', '--config', repoPath('gateway.yaml'), '--port', String(port), '--host', '127.0.0.1'],
    { LANEGATE_DATA_DIR: dir, LANEGATE_ADMIN_PORT: '0' }, ['ignore', out, 'pipe'])
  closeSync(out)
  const output = (): string => readFileSync(outFile, 'utf8')
  let errors = ''
  child.stderr?.on('data', (d: Buffer) => { errors += d.toString() })
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
  t.teardown(async () => {
    if (child.exitCode === null) child.kill('SIGTERM')
    await closed
    await rm(dir, { recursive: true, force: true })
  })
  await waitFor(() => fetch(`${base}/healthz`).then((r) => r.ok, () => false), { what: `lanegate to answer /healthz (stderr: ${errors})` })

  const form = 'grant_type=client_credentials&client_id=demo-content&client_secret=demo-content-secret'
  const issued = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
  const token = (await issued.json() as { access_token: string }).access_token
  async function gets (count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${base}/public/v1/content`, { headers: { authorization: `Bearer ${token}` } })
      await res.text()
      if (res.status !== 200) throw new Error(`GET /public/v1/content answered ${res.status}`)
    }
  }
  await gets(300)
  child.kill('SIGUSR2')
  await waitFor(() => output().includes('tick-probe: collected'), { what: 'the probe\'s GC' })
  await gets(300)
  child.kill('SIGUSR2')
  await waitFor(() => output().includes('tick-probe: end'), { what: 'the probe\'s feedback print' })
  // V8 prints through C's stdio, which holds a pipe's output until the process exits.
  child.kill('SIGTERM')
  t.equal(await closed, 0, 'the gateway shut down cleanly')
  const printed = output().split('tick-probe: feedback')[1] ?? ''
  const states = [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1])
  t.same(states, ['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC'], `the four keys of node's tick object literal (${states.join(', ')})`)
})
