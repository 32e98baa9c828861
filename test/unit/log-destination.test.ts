import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createAsyncLogDestination } from '../../src/log-destination.js'

t.test('a full pipe nobody reads: writes never block, the excess is dropped, flush gives up at its deadline', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-log-'))
  const fifo = join(dir, 'pipe')
  execFileSync('mkfifo', [fifo])
  // Opened read-write (so the open does not wait for a reader) and non-blocking: nobody ever reads it.
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
  // The FIFO's descriptor stays open to the end of the process (the gateway's fd 1 never closes). At the end a
  // reader finally reads it dry, so the stream's pending writes finish and the test process can end.
  t.teardown(async () => {
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const chunk = Buffer.alloc(65536)
    for (let idle = 0; idle < 20;) {
      let n = 0
      try { n = readSync(reader, chunk) } catch {}
      idle = n > 0 ? 0 : idle + 1
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    closeSync(reader)
    rmSync(dir, { recursive: true, force: true })
  })
  const destination = createAsyncLogDestination(fd, 256 * 1024)
  const line = `${JSON.stringify({ level: 30, msg: 'x'.repeat(200) })}\n`
  const started = Date.now()
  for (let i = 0; i < 10_000; i++) destination.write(line) // ~2 MB, far more than pipe + buffer hold
  // A write that waited for the pipe would wait forever (nobody reads it): the bounds below only tell "returned"
  // from "stuck", so they are far above what an idle machine takes (tens of ms) and a loaded one cannot reach them.
  const writing = Date.now() - started
  t.ok(writing < 10_000, `10,000 writes returned (${writing} ms)`)
  const tick = await new Promise<number>((resolve) => { const at = Date.now(); setImmediate(() => resolve(Date.now() - at)) })
  t.ok(tick < 5_000, `the event loop keeps turning (${tick} ms to the next turn)`)
  t.ok(destination.dropped > 0, `lines over the buffer were dropped (${destination.dropped})`)
  const flushStarted = Date.now()
  await destination.flush(300)
  const waited = Date.now() - flushStarted
  // Not before its 300 ms deadline (a timer never fires early), and then it gives up rather than waiting for a
  // reader that never comes: the upper bound is 10 × the deadline.
  t.ok(waited >= 250 && waited < 3000, `flush gave up after its deadline (${waited} ms)`)
})

t.test('a reader that reads: every line arrives in order and flush resolves when written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-log-'))
  const file = join(dir, 'out.log')
  const fd = openSync(file, 'w')
  t.teardown(() => { closeSync(fd); rmSync(dir, { recursive: true, force: true }) })
  const destination = createAsyncLogDestination(fd)
  for (let i = 0; i < 1000; i++) destination.write(`${i}\n`)
  await destination.flush(5000)
  t.same(readFileSync(file, 'utf8').split('\n').slice(0, -1), Array.from({ length: 1000 }, (_, i) => String(i)))
  t.equal(destination.dropped, 0)
})
