import { spawn } from 'node:child_process'
import t from 'tap'
import { collectOutput } from '../helpers/collect-output.js'
import { repoPath } from '../helpers/paths.js'
import { freePort } from '../helpers/spawn-gateway.js'
import { waitForText } from '../helpers/wait-for.js'

/** `npm run simulators -- ARGS` as its compiled script, on ports shifted by `offset`; resolves once it printed `lines`. */
function simulators (args: string[], offset: number) {
  return collectOutput(spawn(process.execPath, [repoPath('dist/test/simulators/run-simulators.js'), ...args], {
    env: { ...process.env, SIM_PORT_OFFSET: String(offset) },
    stdio: ['ignore', 'pipe', 'pipe'],
  }))
}

// docs/proxy.md: stop one pricing instance to see failover. With all simulators in one process that was
// impossible; `--only` runs one in a process of its own.
t.test('--only pricing-9302 starts that instance alone, and stopping it stops only it', async (t) => {
  const port = await freePort()
  const offset = port - 9302
  const one = simulators(['--only', 'pricing-9302'], offset)
  t.teardown(() => { one.child.kill('SIGKILL') })
  await waitForText(one.output, 'legacy pricing simulator', { what: 'the simulator to start' })
  t.equal(one.output(), `legacy pricing simulator pricing-9302 on http://127.0.0.1:${port}\n`, 'only that one started')
  const res = await fetch(`http://127.0.0.1:${port}/health`)
  t.equal(res.status, 200)
  one.child.kill('SIGTERM')
  t.equal(await one.exited, 0, 'stops on SIGTERM')
  await t.rejects(fetch(`http://127.0.0.1:${port}/health`), 'its port is closed')
})

t.test('an unknown name is refused with the known ones; --only and --except exclude each other', async (t) => {
  const wrong = simulators(['--only', 'pricing-a'], 0)
  t.equal(await wrong.exited, 1)
  t.equal(wrong.output(), 'unknown simulator pricing-a (known: lane-9101, lane-9102, lane-9190, cs-9200, pricing-9301, pricing-9302, soap-store-9401, soap-store-9402)\n')
  const both = simulators(['--only', 'cs-9200', '--except', 'lane-9101'], 0)
  t.equal(await both.exited, 1)
  t.equal(both.output(), '--only and --except exclude each other\n')
})
