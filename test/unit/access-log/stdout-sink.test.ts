import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createStdoutSink } from '../../../src/logging/access-log/stdout-sink.js'
import { createAsyncLogDestination, stdoutDestination } from '../../../src/logging/log-destination.js'

t.test('the stdout sink writes through the process\'s one stdout writer (the logger\'s), bounded by its own buffer_bytes', async (t) => {
  const out = stdoutDestination()
  t.equal(stdoutDestination(), out, 'one writer per process')
  const writeWithin = out.writeWithin
  const asked: [string, number][] = []
  let room = true
  out.writeWithin = (line, max) => { asked.push([line, max]); return room }
  t.teardown(() => { out.writeWithin = writeWithin })
  let dropped = 0
  const sink = createStdoutSink('stdout', 4096, { onDropped (_sink, lines) { dropped += lines }, onFailure () {} })
  sink.write('{"n":1}\n')
  room = false
  sink.write('{"n":2}\n')
  t.same(asked, [['{"n":1}\n', 4096], ['{"n":2}\n', 4096]])
  // That it is not also a dropped log line is writeWithin's to show (the next test), not this stub's.
  t.equal(dropped, 1, 'the line the writer had no room for is the sink\'s drop')
})

t.test('writeWithin: past the caller\'s bound a line is refused, not written and not counted as a dropped log line', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-stdout-sink-'))
  const path = join(dir, 'out.log')
  const fd = openSync(path, 'w')
  t.teardown(() => { closeSync(fd); rmSync(dir, { recursive: true, force: true }) })
  const destination = createAsyncLogDestination(fd, 1024)
  t.equal(destination.writeWithin(`${'x'.repeat(100)}\n`, 10), false)
  t.equal(destination.writeWithin('kept\n', 1_000_000), true, 'the destination\'s own bound (1024) still applies; this fits')
  t.equal(destination.writeWithin(`${'y'.repeat(2000)}\n`, 1_000_000), false, 'past the destination\'s own bound')
  await destination.flush(5_000)
  t.equal(readFileSync(path, 'utf8'), 'kept\n')
  t.equal(destination.dropped, 0)
})
