import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { askAllocatedBytes, HEAP_SOCKET_ENV } from '../../bench/heap-client.js'
import { waitFor } from '../helpers/wait-for.js'

// The preload compiled beside the harness (dist/bench/heap-preload.js for dist/test/e2e/…).
const PRELOAD = new URL('../../bench/heap-preload.js', import.meta.url).href

// Each line read: 100,000 arrays of 100 small integers, kept one at a time (many scavenges free them), then "done".
const CHILD = `
let kept
process.stdin.setEncoding('utf8')
process.stdin.on('data', () => {
  for (let i = 0; i < 100000; i++) kept = new Array(100).fill(i)
  process.stdout.write('done\\n')
})
setInterval(() => {}, 1000)
`

// An array of 100 tagged elements: its backing store (a 16-byte header and 100 × 8 bytes) and its 32-byte JSArray.
const BYTES_PER_ARRAY = 16 + 100 * 8 + 32

t.test('a preloaded process tells the bytes its heap allocated, what its GCs freed included', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-heap-preload-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const socket = join(dir, 'child.heap.sock')
  const child = spawn(process.execPath, ['--import', PRELOAD, '-e', CHILD], { env: { ...process.env, [HEAP_SOCKET_ENV]: socket }, stdio: ['pipe', 'pipe', 'inherit'] })
  // tap runs teardowns last-registered first: the child has exited before its socket's folder is removed.
  const exited = once(child, 'exit')
  t.teardown(async () => { child.kill(); await exited })
  child.stdout.setEncoding('utf8')
  await waitFor(() => askAllocatedBytes(socket, 1000).then(() => true, () => false), { what: 'the preload to answer on its socket', intervalMs: 50 })
  const before = await askAllocatedBytes(socket)
  child.stdin.write('go\n')
  await once(child.stdout, 'data')
  const allocated = await askAllocatedBytes(socket) - before
  const expected = 100_000 * BYTES_PER_ARRAY
  t.ok(allocated >= expected * 0.9 && allocated <= expected * 1.3, `${allocated} bytes allocated for about ${expected}`)
})

t.test('the client rejects when nothing answers on the socket', async (t) => {
  await t.rejects(askAllocatedBytes(join(tmpdir(), `lanegate-no-such-${process.pid}.sock`), 500), /heap preload at .*: /)
})
