import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createAsyncLogDestination } from '../../src/logging/log-destination.js'
import { createLogger, DROPPED_LINES_MESSAGE, warnOfDroppedLines } from '../../src/logging/logger.js'
import { WAIT_TIMEOUT_MS, waitFor } from '../helpers/wait-for.js'

t.test('a full pipe nobody reads: writes never block, the excess is dropped, flush gives up at its deadline', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-log-'))
  const fifo = join(dir, 'pipe')
  execFileSync('mkfifo', [fifo])
  // Opened read-write (so the open does not wait for a reader) and non-blocking: nobody ever reads it.
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
  // The FIFO's descriptor stays open to the end of the process (the gateway's fd 1 never closes). At the end a
  // reader finally reads it dry, so the stream's pending writes finish and the test process can end.
  const destination = createAsyncLogDestination(fd, 256 * 1024)
  t.teardown(async () => {
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const chunk = Buffer.alloc(65536)
    let written = false
    void destination.flush(WAIT_TIMEOUT_MS).then(() => { written = true })
    await waitFor(() => {
      try { while (readSync(reader, chunk) > 0) { /* read it dry */ } } catch {} // EAGAIN: empty for now
      return written
    }, { what: 'the destination to write what it still held into the FIFO being read' })
    closeSync(reader)
    rmSync(dir, { recursive: true, force: true })
  })
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

/** Reads everything a FIFO holds until `done(text)` holds (the writer drains into it as it is read). */
async function readFifoUntil (fifo: string, done: (text: string) => boolean): Promise<string> {
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  const chunk = Buffer.alloc(65536)
  let text = ''
  try {
    await waitFor(() => {
      for (;;) {
        let n = 0
        try { n = readSync(reader, chunk) } catch {}
        if (n <= 0) break
        text += chunk.subarray(0, n).toString('utf8')
      }
      return done(text)
    }, { what: 'the log line telling of the dropped lines' })
  } finally {
    closeSync(reader)
  }
  return text
}

t.test('a backed-up pipe drops lines; once it drains, one warn line carries dropped_lines, and every line is either written or counted', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-log-'))
  const fifo = join(dir, 'pipe')
  execFileSync('mkfifo', [fifo])
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const destination = createAsyncLogDestination(fd, 256 * 1024)
  const logger = createLogger('info', destination)
  warnOfDroppedLines(logger, destination)
  const reports: number[] = []
  destination.onDrained((n) => reports.push(n))
  const total = 10_000
  for (let i = 0; i < total; i++) logger.info({ i }, 'x'.repeat(200)) // ~2.5 MB: the pipe and the buffer hold far less
  const dropped = destination.dropped
  t.ok(dropped > 0, `lines were dropped (${dropped})`)
  t.same(reports, [], 'nothing is told while the pipe is backed up')

  // The reader catches up: the destination drains and tells.
  const text = await readFifoUntil(fifo, (read) => read.includes('"dropped_lines"'))
  const lines = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
  const warn = lines.at(-1) as Record<string, unknown>
  t.same(Object.keys(warn).sort(), ['dropped_lines', 'hostname', 'level', 'msg', 'pid', 'time'])
  t.same({ level: warn.level, dropped_lines: warn.dropped_lines, msg: warn.msg, pid: warn.pid },
    { level: 40, dropped_lines: dropped, msg: DROPPED_LINES_MESSAGE, pid: process.pid })
  t.same(reports, [dropped], 'told once, with every dropped line')
  t.equal(lines.length - 1 + dropped, total, 'every line was either written or counted as dropped')
  t.equal(destination.dropped, dropped, 'the warn line itself was not dropped')
})

t.test('a file destination (thread pool) over its buffer: the drops are told once the queue is written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-log-'))
  const file = join(dir, 'out.log')
  const fd = openSync(file, 'w')
  t.teardown(() => { closeSync(fd); rmSync(dir, { recursive: true, force: true }) })
  const destination = createAsyncLogDestination(fd, 1024)
  const logger = createLogger('info', destination)
  warnOfDroppedLines(logger, destination)
  // All written before the first fs.write returns: beyond 1 KB they are dropped.
  for (let i = 0; i < 100; i++) logger.info({ i }, 'y'.repeat(100))
  const dropped = destination.dropped
  t.ok(dropped > 0, `lines were dropped (${dropped})`)
  await waitFor(() => readFileSync(file, 'utf8').includes('"dropped_lines"'), { what: 'the warn line in the file' })
  await destination.flush(5000)
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.same(lines.filter((l) => l.level === 40).map((l) => [l.dropped_lines, l.msg]), [[dropped, DROPPED_LINES_MESSAGE]])
  t.equal(lines.length - 1 + dropped, 100, 'every line was either written or counted as dropped')
})
