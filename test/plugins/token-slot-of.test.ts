import { connect, type ClientHttp2Session } from 'node:http2'
import { request as httpRequest, Agent } from 'node:http'
import Fastify, { type FastifyRequest } from 'fastify'
import t from 'tap'
import { tokenSlotOf } from '../../plugins/token-slot-of.js'

/**
 * `auth` and `api-key` remember the last token per client connection. Over HTTP/2 `request.raw.socket` is a proxy
 * made anew for each stream, so keyed by it every request had a slot of its own and the memory never hit: the slot
 * must follow the HTTP/2 session, and the socket over HTTP/1.1.
 */
function slotNumbering (): (slot: object) => number {
  const numbers = new WeakMap<object, number>()
  let next = 0
  return (slot) => {
    let n = numbers.get(slot)
    if (n === undefined) numbers.set(slot, n = ++next)
    return n
  }
}

function get (session: ClientHttp2Session, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path })
    let body = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => { body += chunk })
    stream.on('end', () => resolve(body))
    stream.on('error', reject)
  })
}

t.test('over HTTP/2 the streams of one session share a token slot; another session has its own', async (t) => {
  const numberOf = slotNumbering()
  const app = Fastify({ http2: true })
  // The policies see fastify's request type of the default server; the raw request is an Http2ServerRequest here.
  app.get('/slot', async (request) => String(numberOf(tokenSlotOf(request as unknown as FastifyRequest))))
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const first = connect(url)
  const second = connect(url)
  t.teardown(() => { first.close(); second.close() })
  const [a, b] = await Promise.all([get(first, '/slot'), get(first, '/slot')])
  const c = await get(first, '/slot')
  const d = await get(second, '/slot')
  t.same([a, b, c], ['1', '1', '1'], 'three streams of one session, one slot')
  t.equal(d, '2', 'another session, another slot')
})

t.test('over HTTP/1.1 the requests of one keep-alive connection share a token slot; another connection has its own', async (t) => {
  const numberOf = slotNumbering()
  const app = Fastify()
  app.get('/slot', async (request) => String(numberOf(tokenSlotOf(request))))
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const port = (app.server.address() as { port: number }).port
  function call (agent: Agent): Promise<string> {
    return new Promise((resolve, reject) => {
      httpRequest({ port, host: '127.0.0.1', path: '/slot', agent }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => { body += chunk })
        res.on('end', () => resolve(body))
      }).on('error', reject).end()
    })
  }
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 })
  const other = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { keepAlive.destroy(); other.destroy() })
  t.same([await call(keepAlive), await call(keepAlive), await call(other)], ['1', '1', '2'])
})
