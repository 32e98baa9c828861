import t from 'tap'
import dgram from 'node:dgram'
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

t.test('UDP: errors the socket reports on its own (not to a send) are told once per failing period too', async (t) => {
  // A socket that cannot bind reports its error as an 'error' event on every send that tries to bind it.
  const bind = dgram.Socket.prototype.bind
  dgram.Socket.prototype.bind = function failingBind (this: dgram.Socket) {
    process.nextTick(() => this.emit('error', Object.assign(new Error('bind EADDRNOTAVAIL'), { code: 'EADDRNOTAVAIL' })))
    return this
  } as typeof bind
  t.teardown(() => { dgram.Socket.prototype.bind = bind })
  const failures: unknown[] = []
  const sink = createSyslogSink({ name: 'syslog', host: '127.0.0.1', port: 514, transport: 'udp', facility: 16, appName: 'lanegate', bufferBytes: 1 << 20 }, {
    onDropped () {},
    onFailure (_sink, error) { failures.push(error) },
  })
  for (let i = 0; i < 20; i++) sink.write(`{"n":${i}}\n`)
  await waitFor(() => failures.length > 0, { what: 'the failure told' })
  // Every send's error event has fired by now (each was queued on the next tick of its send).
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(failures.length, 1, 'told once, not once per line')
  dgram.Socket.prototype.bind = bind
  await sink.close(10)
})
