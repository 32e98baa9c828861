import { connect, type Socket } from 'node:net'
import t from 'tap'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

const HEADERS_TIMEOUT_MS = 1000
const REQUEST_TIMEOUT_MS = 1500
/**
 * How late a cut may come: 10 × its timeout, for a loaded machine. That still tells the fix from node's default
 * (a check every 30 s, counted from listen): both connections are opened at once, right after the gateway
 * listens, so a cut left to that check comes near 30 s after listen, far more than 15 s after the connection.
 */
const LATENESS = 10

/**
 * Opens a socket, writes `head` at once and then one more byte of `trickle` every 250 ms, and resolves with
 * how long after connecting the gateway ended the connection, and what it answered.
 */
function trickle (port: number, head: string, drip: string): Promise<{ ms: number, answer: string }> {
  return new Promise((resolve) => {
    const started = Date.now()
    let answer = ''
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write(head)
      const timer = setInterval(() => { if (!socket.destroyed) socket.write(drip) }, 250)
      socket.on('close', () => {
        clearInterval(timer)
        resolve({ ms: Date.now() - started, answer })
      })
    })
    socket.on('data', (d: Buffer) => { answer += d.toString() })
    socket.on('error', () => {})
    // The bound of the test itself, past either cut's bound: the old behaviour (a 30 s check) gets no answer.
    setTimeout(() => socket.destroy(), 20_000).unref()
  })
}

t.test('headers_timeout_ms and request_timeout_ms are enforced, not left to node\'s 30 s check, on a real lanegate start', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').set('server.headers_timeout_ms', HEADERS_TIMEOUT_MS).set('server.request_timeout_ms', REQUEST_TIMEOUT_MS).write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })

  // Both at once (one after the other, the second would start closer to node's 30 s check).
  const slowHead = trickle(gw.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'a')
  const bodyHead = 'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n'
  const slowBody = trickle(gw.port, bodyHead, 'a')

  await t.test('slowloris: a head that never ends is cut at headers_timeout_ms, not before', async (t) => {
    const { ms, answer } = await slowHead
    t.ok(ms >= HEADERS_TIMEOUT_MS - 100 && ms <= LATENESS * HEADERS_TIMEOUT_MS, `closed after ${ms} ms (configured ${HEADERS_TIMEOUT_MS})`)
    t.match(answer, /^HTTP\/1\.1 408 /)
  })

  await t.test('a body that never ends is cut at request_timeout_ms, not before', async (t) => {
    const { ms, answer } = await slowBody
    t.ok(ms >= REQUEST_TIMEOUT_MS - 100 && ms <= LATENESS * REQUEST_TIMEOUT_MS, `closed after ${ms} ms (configured ${REQUEST_TIMEOUT_MS})`)
    t.match(answer, /^HTTP\/1\.1 408 /)
  })
})
