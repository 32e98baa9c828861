import t from 'tap'
import { createSyslogSink } from '../../../src/logging/access-log/syslog-sink.js'
import { freePort } from '../../helpers/spawn-gateway.js'
import { waitFor } from '../../helpers/wait-for.js'

t.test('a syslog server that is down (TCP): lines are dropped and counted, the failure told once, nothing waits', async (t) => {
  const port = await freePort()
  let dropped = 0
  const failures: unknown[] = []
  const sink = createSyslogSink({ name: 'syslog', host: '127.0.0.1', port, transport: 'tcp', facility: 16, appName: 'lanegate', bufferBytes: 1 << 20 }, {
    onDropped (_sink, lines) { dropped += lines },
    onFailure (_sink, error) { failures.push(error) },
  })
  for (let i = 0; i < 100; i++) sink.write(`{"n":${i}}\n`)
  await waitFor(() => dropped === 100, { what: 'every line counted as dropped' })
  await sink.close(1000)
  t.equal(failures.length, 1)
  t.match(String(failures[0]), /ECONNREFUSED/)
})
