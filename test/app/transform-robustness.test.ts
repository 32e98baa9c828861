import t from 'tap'
import fc from 'fast-check'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { buildTestApp } from '../helpers/build-app.js'
import { transformYaml } from '../helpers/transform-config.js'
import { startBackend } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

const hashes = await apiKeyHashes()

const ROUTES = `
      xml_both:
        methods: [POST]
        path: "/xml"
        policies:
          - transform:
              max_body_bytes: 4096
              xml: { arrays: [Order.Line] }
              request: { body: { from: xml, rename: { Order.Line: Order.Lines }, to: xml } }
              response: { body: { from: xml, map: '{ "answer": $ }' } }
      json_both:
        methods: [POST]
        path: "/json"
        policies:
          - transform:
              max_body_bytes: 4096
              request: { body: { set: { a.b: 1 }, map: '$merge([$, { "n": $count(items) }])' } }
              response: { body: { rename: { x.y: z } } }
      big:
        methods: [GET]
        path: "/big"
        policies:
          - transform:
              max_body_bytes: 1048576
              response: { body: { from: xml } }
`

const xmlish = fc.array(fc.oneof(
  fc.constantFrom('<Order>', '</Order>', '<Line n="1">', '</Line>', '<a/>', '<!DOCTYPE x>', '<!ENTITY e "x">', '&e;', '&amp;', '&#65;', '<![CDATA[x]]>', '<?xml version="1.0"?>', '<!-- c -->', '"', '<', '>', '{', '}', '[', ']', ',', ':', '"items"', '"a"', 'null', '1e999'),
  fc.string({ maxLength: 6 }),
), { maxLength: 40 }).map((parts) => parts.join(''))
const bodies = fc.oneof(xmlish, fc.json(), fc.string(), fc.constant(''))

t.test('no generated body, from a caller or an upstream, crashes the gateway or gets a 5xx other than the documented 502', async (t) => {
  const backend = await startBackend(t, 'fuzz')
  let answer = ''
  backend.handle((_req, res) => { res.writeHead(200, { 'content-type': 'application/xml' }); res.end(answer) })
  const gw = await buildTestApp({ yaml: transformYaml(hashes, backend.url, ROUTES) })
  t.teardown(() => gw.close())
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(bodies, bodies, fc.constantFrom('/xml', '/json'), fc.constantFrom('application/xml', 'application/json', 'text/plain'), async (request, upstream, route, type) => {
    answer = upstream
    const res = await gw.app.inject({ method: 'POST', url: `/legacy/pricing${route}`, headers: { 'x-api-key': KEYS.till, 'content-type': type }, payload: request })
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    const body = (res.body === '' ? {} : res.json()) as Record<string, unknown>
    if ([200, 400, 413, 415].includes(res.statusCode)) return
    if (res.statusCode === 502 && body.error === 'upstream_error' && body.upstream_failure === 'protocol' && body.upstream_body === '') return
    throw new Error(`${route} ${type} ${JSON.stringify(request)} / upstream ${JSON.stringify(upstream)}: ${res.statusCode} ${res.body}`)
  }), { seed: 44, numRuns: 600 })
  t.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0 && (statuses.get(502) ?? 0) > 0, `answers seen: ${JSON.stringify([...statuses])}`)
})

t.test('a 10 MB XML answer with max_body_bytes 1 MB is 502 too_large: the gateway stops reading near the bound', async (t) => {
  const backend = await startBackend(t, 'big')
  let written = 0
  let closed = false
  backend.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/xml' })
    const chunk = Buffer.from('<Item>' + 'x'.repeat(65536 - 13) + '</Item>')
    res.on('close', () => { closed = true })
    res.write('<Items>')
    const more = (): void => {
      while (written < 10 * 1024 * 1024 && !res.destroyed) {
        written += chunk.length
        if (!res.write(chunk)) { res.once('drain', more); return }
      }
      if (!res.destroyed) res.end('</Items>')
    }
    more()
  })
  const gw = await buildTestApp({ yaml: transformYaml(hashes, backend.url, ROUTES) })
  t.teardown(() => gw.close())
  global.gc?.()
  const before = process.memoryUsage().rss
  const res = await gw.app.inject({ method: 'GET', url: '/legacy/pricing/big', headers: { 'x-api-key': KEYS.till } })
  t.same({ status: res.statusCode, body: res.json() }, {
    status: 502,
    body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'too_large', upstream_body: '', message: 'The upstream service answered with a body larger than 1048576 bytes.' },
  })
  await waitFor(() => closed, { what: 'the upstream connection dropped' })
  const grown = process.memoryUsage().rss - before
  // The backend could hand over no more than the bound plus what the loopback sockets' buffers hold (a few MiB)
  // before the drop; a gateway that read the whole answer would have taken all 10 MiB.
  t.ok(written < 7 * 1024 * 1024, `the backend wrote ${written} bytes of 10 MiB before the gateway dropped it`)
  t.ok(grown < 64 * 1024 * 1024, `RSS grew by ${Math.round(grown / 1024 / 1024)} MiB`)
})
