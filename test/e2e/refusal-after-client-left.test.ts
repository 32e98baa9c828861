import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { buildTestApp, type TestApp } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * A decision service (external-auth) that refuses every request with 403: at once, or, once `holdNext()` was called,
 * only when the test calls `release()` (`asked` resolves when that held request came in).
 */
async function startDecider (t: Test): Promise<{ url: string, holdNext: () => { asked: Promise<void>, release: () => void } }> {
  let held: { asked: () => void, released: Promise<void> } | undefined
  let releaseAll: () => void = () => {}
  const server = createServer((req, res) => {
    req.resume()
    const hold = held
    held = undefined
    if (hold === undefined) {
      res.writeHead(403).end()
      return
    }
    hold.asked()
    void hold.released.then(() => res.writeHead(403).end())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { releaseAll(); server.closeAllConnections(); server.close(() => resolve()) }))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/decide`,
    holdNext () {
      let asked: () => void = () => {}
      let release: () => void = () => {}
      const askedP = new Promise<void>((resolve) => { asked = resolve })
      const released = new Promise<void>((resolve) => { release = resolve })
      releaseAll = release
      held = { asked, released }
      return { asked: askedP, release }
    },
  }
}

/** One GET on a fresh connection: the answer's text, or '' when `leave` closes it once the decider has the request. */
async function get (gw: TestApp, leave?: { asked: Promise<void>, release: () => void }): Promise<string> {
  const socket = connect((gw.app.server.address() as AddressInfo).port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /ext/item HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n')
  if (leave !== undefined) {
    await leave.asked
    socket.destroy()
    // The gateway's side of the connection closed: the refusal comes after its client left.
    await waitFor(async () => await new Promise<number>((resolve, reject) => { gw.app.server.getConnections((error, count) => { if (error === null) resolve(count); else reject(error) }) }) === 0, { what: 'the client\'s connection closed at the gateway' })
    leave.release()
    return ''
  }
  let text = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
  await once(socket, 'close')
  return text
}

/** What each path saw of the 403s: the refusal counter, the answer counter, access lines, `request completed` lines. */
async function seen (gw: TestApp, accessLog: string): Promise<Record<string, number>> {
  const text = await gw.metrics?.registry.metrics() ?? ''
  const value = (prefix: string): number => Number(text.split('\n').find((l) => l.startsWith(prefix))?.split(' ').at(-1) ?? 0)
  return {
    refusals: value('lanegate_auth_refusals_total{service="ext",code="forbidden"}'),
    answered: value('lanegate_http_requests_total{service="ext",route="read",method="GET",status="403"}'),
    accessLines: (await readFile(accessLog, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length,
    logLines: gw.logs.filter((l) => l.includes('"msg":"request completed"') && l.includes('"url":"/ext/item"')).length,
  }
}

t.test('a refusal decided after its client left is completed once: counted, answered, access-logged and logged like one the client read', async (t) => {
  const decider = await startDecider(t)
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-refusal-left-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const accessLog = join(dir, 'access.log')
  const fixture = gatewayFixture('minimal')
    .set('access_log', { fields: ['status'], sinks: [{ type: 'file', path: accessLog }] })
    .set('services', {
      ext: { type: 'proxy', prefix: '/ext', envelope: 'plain', upstream: { targets: ['http://127.0.0.1:9'] }, policies: [{ 'external-auth': { url: decider.url, timeout_ms: 30_000 } }], routes: { read: { methods: ['GET'], path: '/*' } } },
    })
  const written = await fixture.write()
  t.teardown(() => written.remove())
  const gw = await buildTestApp({ file: written.file, logLevel: 'info' })
  t.teardown(() => gw.close())
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  const once403 = { refusals: 1, answered: 1, accessLines: 1, logLines: 1 }

  t.match(await get(gw), /^HTTP\/1\.1 403 /, 'answered while the client waits')
  // fastify completes an answer once the socket accepted all of it, which may come after the client read it.
  await waitFor(async () => (await seen(gw, accessLog)).accessLines === 1, { what: 'the first 403 access-logged' })
  t.same(await seen(gw, accessLog), once403)

  await get(gw, decider.holdNext())
  // A third request, answered, runs after whatever the abandoned one left queued (a late completion).
  t.match(await get(gw), /^HTTP\/1\.1 403 /)
  await waitFor(async () => (await seen(gw, accessLog)).accessLines >= 3, { what: 'three 403s access-logged' })
  t.same(await seen(gw, accessLog), { refusals: 3, answered: 3, accessLines: 3, logLines: 3 }, 'the refusal to the client that left counts once in each')
})
