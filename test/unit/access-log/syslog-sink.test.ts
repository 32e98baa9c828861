import t from 'tap'
import dgram from 'node:dgram'
import { once } from 'node:events'
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

t.test('UDP: a bind that fails drops the lines queued behind it, counted, told once; later lines are sent once a bind succeeds', async (t) => {
  const server = dgram.createSocket('udp4')
  server.bind(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  // As Node does when the socket cannot bind: one 'error' per bind attempt, and the sends queued behind it discarded
  // without their callbacks (the real bind, sent to an address this host does not have).
  const bind = dgram.Socket.prototype.bind
  let attempts = 0
  dgram.Socket.prototype.bind = function failingBind (this: dgram.Socket) {
    attempts++
    return bind.call(this, { port: 0, address: '192.0.2.1', exclusive: true })
  } as typeof bind
  t.teardown(() => { dgram.Socket.prototype.bind = bind })
  let dropped = 0
  const failures: unknown[] = []
  // Room for the three lines of the failed attempt and no more: a sink still counting them as in flight drops the fourth.
  const payload = 'x'.repeat(1000)
  const sink = createSyslogSink({ name: 'syslog', host: '127.0.0.1', port: server.address().port, transport: 'udp', facility: 16, appName: 'lanegate', bufferBytes: 4000 }, {
    onDropped (_sink, lines) { dropped += lines },
    onFailure (_sink, error) { failures.push(error) },
  })
  for (let i = 0; i < 3; i++) sink.write(`{"n":${i},"pad":"${payload}"}\n`)
  await waitFor(() => failures.length > 0, { what: 'the failure told' })
  t.same({ attempts, dropped, failures: failures.map(String) }, { attempts: 1, dropped: 3, failures: ['Error: bind EADDRNOTAVAIL 192.0.2.1'] })

  dgram.Socket.prototype.bind = bind
  let received = ''
  server.on('message', (datagram: Buffer) => { received = datagram.toString() })
  const droppedBefore = dropped
  sink.write(`{"n":3,"pad":"${payload}"}\n`)
  await waitFor(() => received !== '' || dropped > droppedBefore, { what: 'the fourth line sent or dropped' })
  t.match(received, new RegExp(`^<134>1 \\S+ \\S+ lanegate \\d+ access - \\{"n":3,"pad":"${payload}"\\}$`), 'sent once the bind succeeds')
  const closing = Date.now()
  await sink.close(10_000)
  t.ok(Date.now() - closing < 5_000, 'close finds nothing in flight')
  t.same({ dropped, failures: failures.length }, { dropped: 3, failures: 1 })
})
