import { connect, type Socket } from 'node:net'
import t from 'tap'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { setKey, tempConfig } from '../helpers/temp-config.js'

const HEADERS_TIMEOUT_MS = 2000
const REQUEST_TIMEOUT_MS = 3000

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
    // The bound of the test itself: the old behaviour (a 30 s check interval) never gets this far.
    setTimeout(() => socket.destroy(), 12_000).unref()
  })
}

t.test('headers_timeout_ms and request_timeout_ms are enforced to within a second on a real lanegate start', async (t) => {
  const cfg = await tempConfig((text) => setKey(setKey(setKey(text, 'data_dir', './data'), 'headers_timeout_ms', String(HEADERS_TIMEOUT_MS)), 'request_timeout_ms', String(REQUEST_TIMEOUT_MS)))
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file })
  t.teardown(() => { gw.child.kill('SIGKILL') })

  await t.test('slowloris: a head that never ends is cut at headers_timeout_ms ± 1 s', async (t) => {
    const { ms, answer } = await trickle(gw.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'a')
    t.ok(ms >= HEADERS_TIMEOUT_MS - 1000 && ms <= HEADERS_TIMEOUT_MS + 1000, `closed after ${ms} ms (configured ${HEADERS_TIMEOUT_MS})`)
    t.match(answer, /^HTTP\/1\.1 408 /)
  })

  await t.test('a body that never ends is cut at request_timeout_ms ± 1 s', async (t) => {
    const head = 'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n'
    const { ms, answer } = await trickle(gw.port, head, 'a')
    t.ok(ms >= REQUEST_TIMEOUT_MS - 1000 && ms <= REQUEST_TIMEOUT_MS + 1000, `closed after ${ms} ms (configured ${REQUEST_TIMEOUT_MS})`)
    t.match(answer, /^HTTP\/1\.1 408 /)
  })
})
