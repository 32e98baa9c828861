import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { askGcPauses } from '../../bench/gc-client.js'
import { GC_SOCKET_ENV } from '../../bench/gc-protocol.js'
import { monotonicMs } from '../../bench/mono-clock.js'
import { waitFor } from '../helpers/wait-for.js'

// The preload compiled beside the harness (dist/bench/gc-preload.js for dist/test/e2e/…).
const PRELOAD = new URL('../../bench/gc-preload.js', import.meta.url).href

// A process that runs a full GC each time it reads a line, and answers "done" once the GC is over.
const CHILD = `
process.stdin.setEncoding('utf8')
process.stdin.on('data', () => { globalThis.gc(); process.stdout.write('done\\n') })
setInterval(() => {}, 1000)
`

t.test('a preloaded process answers with the GC pauses of a window, on the clock the harness reads', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-gc-preload-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const socket = join(dir, 'child.gc.sock')
  const child = spawn(process.execPath, ['--expose-gc', '--import', PRELOAD, '-e', CHILD], {
    env: { ...process.env, [GC_SOCKET_ENV]: socket },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  // tap runs teardowns last-registered first: the child has exited before its socket's folder is removed.
  const exited = once(child, 'exit')
  t.teardown(async () => { child.kill(); await exited })
  child.stdout.setEncoding('utf8')
  // The socket listens once the preload ran; ask until it answers.
  await waitFor(() => askGcPauses(socket, { fromMs: 0, toMs: 1 }, 1000).then(() => true, () => false), { what: 'the preload to answer on its socket', intervalMs: 50 })
  t.pass('the preload answers on its socket')

  const before = monotonicMs()
  child.stdin.write('gc\n')
  await once(child.stdout, 'data')
  const after = monotonicMs()
  // Stamped by the child on the machine's monotonic clock: the forced full GC falls between our two readings.
  const { pauses, complete, youngGenerationBytes } = await askGcPauses(socket, { fromMs: before, toMs: after })
  t.equal(complete, true)
  // V8 starts the young generation's capacity near 1 MB on 64-bit and caps it at 16 MB by default.
  t.ok(youngGenerationBytes !== undefined && youngGenerationBytes >= 256 * 1024 && youngGenerationBytes <= 32 * 1024 * 1024, `the young generation's capacity comes with the pauses (${youngGenerationBytes} bytes)`)
  t.equal(pauses.filter((p) => p.kind === 4).length, 1, `one major GC in the window (kinds: ${pauses.map((p) => p.kind).join(', ')})`)
  for (const p of pauses) t.ok(p.startMs >= before && p.startMs + p.durationMs <= after, `a pause of ${p.durationMs} ms lies inside the window`)
  t.match(await askGcPauses(socket, { fromMs: after + 60_000, toMs: after + 120_000 }), { pauses: [], complete: true }, 'a later window holds none')
  t.equal(child.exitCode, null, 'the child still runs')
})

t.test('the client rejects when nothing answers on the socket', async (t) => {
  await t.rejects(askGcPauses(join(tmpdir(), `lanegate-no-such-${process.pid}.sock`), { fromMs: 0, toMs: 1 }, 500), /GC preload at .*: /)
})

