import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { buildTestApp } from '../helpers/build-app.js'
import { transformYaml } from '../helpers/transform-config.js'
import { startBackend, type BackendHandler } from '../helpers/upstream-servers.js'

const hashes = await apiKeyHashes()

const ROUTES = `
      to_xml:
        methods: [POST]
        path: "/orders"
        policies:
          - transform:
              xml: { arrays: [Answer.Lines.Line] }
              request:
                body: { to: xml, map: '{ "Order": { "@store": store, "Line": lines.{ "@sku": sku, "#text": $string(qty) } } }' }
              response:
                body: { from: xml, map: '{ "id": Answer.\`@id\`, "status": Answer.Status, "lines": Answer.Lines.Line }' }
      stripped:
        methods: [GET]
        path: "/stripped"
        policies:
          - transform:
              xml: { namespaces: strip }
              response: { body: { from: xml } }
      xml_in:
        methods: [POST]
        path: "/xml-in"
        policies:
          - transform:
              request: { body: { from: xml, set: { Order.checked: "yes" }, to: xml } }
      two_roots:
        methods: [POST]
        path: "/two-roots"
        policies:
          - transform:
              request: { body: { map: '{ "A": a, "B": b }', to: xml } }
`

async function gateway (t: Test, handler: BackendHandler) {
  const backend = await startBackend(t, 'orders')
  backend.handle(handler)
  const gw = await buildTestApp({ yaml: transformYaml(hashes, backend.url, ROUTES) })
  t.teardown(() => gw.close())
  const send = (method: 'GET' | 'POST', url: string, payload?: string, contentType = 'application/json') => gw.app.inject({
    method,
    url: `/legacy/pricing${url}`,
    headers: { 'x-api-key': KEYS.till, ...(payload === undefined ? {} : { 'content-type': contentType }) },
    ...(payload === undefined ? {} : { payload }),
  })
  return { backend, send }
}

function xml (body: string, status = 200): BackendHandler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/xml; charset=utf-8' })
    res.end(body)
  }
}

/** A server that counts requests: an external entity pointing at it must never be fetched. */
async function entityTarget (t: Test) {
  let hits = 0
  const server = createServer((_req, res) => { hits++; res.end('pwned') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/secret`, hits: () => hits }
}

const BILLION_LAUGHS = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
  '<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><Order>&lol3;</Order>'
const xxe = (url: string) => `<?xml version="1.0"?><!DOCTYPE Order [<!ENTITY xxe SYSTEM "${url}"><!ENTITY file SYSTEM "file:///etc/passwd">]><Order>&xxe;&file;</Order>`

t.test('a JSON request becomes XML upstream and the XML answer JSON: attributes, text, arrays by configuration', async (t) => {
  const { backend, send } = await gateway(t, xml('<?xml version="1.0" encoding="UTF-8"?><Answer id="o-7"><Status>accepted &amp; queued</Status><Lines><Line sku="a">2</Line></Lines></Answer>', 201))
  const res = await send('POST', '/orders', JSON.stringify({ store: 's<1>', lines: [{ sku: 'a', qty: 2 }, { sku: 'b&c', qty: 1 }] }))
  t.same({ status: res.statusCode, type: res.headers['content-type'], body: res.json() }, {
    status: 201,
    type: 'application/json; charset=utf-8',
    body: { id: 'o-7', status: 'accepted & queued', lines: [{ '@sku': 'a', '#text': '2' }] },
  }, 'one Line, an array because `arrays` lists it')
  const seen = backend.seen[0]!
  t.equal(seen.body, '<Order store="s&lt;1&gt;"><Line sku="a">2</Line><Line sku="b&amp;c">1</Line></Order>')
  t.equal(seen.headers['content-type'], 'application/xml')
  t.equal(seen.headers['content-length'], String(Buffer.byteLength(seen.body)))
})

t.test('namespace prefixes are kept, or stripped with their xmlns attributes', async (t) => {
  const { send } = await gateway(t, xml('<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><m:Price xmlns:m="urn:p" m:cur="EUR">3.50</m:Price></s:Body></s:Envelope>'))
  const res = await send('GET', '/stripped')
  t.same({ status: res.statusCode, body: res.json() }, { status: 200, body: { Envelope: { Body: { Price: { '#text': '3.50', '@cur': 'EUR' } } } } })
})

t.test('a caller\'s XML with a DTD is refused with 400, never expanded or fetched (billion laughs, XXE)', async (t) => {
  const target = await entityTarget(t)
  const { backend, send } = await gateway(t, xml('<ok/>'))
  const refused = { error: 'transform_failed', location: 'body', path: '', message: 'The request body is XML with a DTD or an entity declaration: refused, never expanded.' }
  for (const [name, body] of [['billion laughs', BILLION_LAUGHS], ['XXE', xxe(target.url)], ['a bare DOCTYPE', '<!DOCTYPE Order SYSTEM "' + target.url + '"><Order/>']]) {
    const res = await send('POST', '/xml-in', body, 'application/xml')
    t.same({ status: res.statusCode, body: res.json() }, { status: 400, body: refused }, name as string)
  }
  const malformed = await send('POST', '/xml-in', '<Order><a></Order>', 'application/xml')
  t.same({ status: malformed.statusCode, body: malformed.json() }, { status: 400, body: { ...refused, message: 'The request body is not well-formed XML: Expected closing tag \'a\' (opened in line 1, col 8) instead of closing tag \'Order\'. (line 1).' } })
  const good = await send('POST', '/xml-in', '<Order id="1"><Line>&#65;&amp;</Line></Order>', 'application/xml')
  t.equal(good.statusCode, 200)
  t.same(backend.seen.map((s) => s.body), ['<Order id="1"><Line>A&amp;</Line><checked>yes</checked></Order>'], 'only the safe body reached the backend')
  t.equal(target.hits(), 0, 'no external entity was fetched')
})

t.test('an upstream\'s XML with a DTD is 502 protocol, never expanded or fetched; malformed XML too', async (t) => {
  const target = await entityTarget(t)
  let answer = BILLION_LAUGHS
  const { send } = await gateway(t, (_req, res) => { res.writeHead(200, { 'content-type': 'application/xml' }); res.end(answer) })
  const expected = (message: string) => ({ status: 502, body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'protocol', upstream_body: '', message } })
  const unsafe = 'The upstream answered with a body that is XML with a DTD or an entity declaration: refused, never expanded.'
  const laughs = await send('GET', '/stripped')
  t.same({ status: laughs.statusCode, body: laughs.json() }, expected(unsafe))
  answer = xxe(target.url)
  const external = await send('GET', '/stripped')
  t.same({ status: external.statusCode, body: external.json() }, expected(unsafe))
  answer = '<Answer><Status>ok</Answer>'
  const broken = await send('GET', '/stripped')
  t.same({ status: broken.statusCode, body: broken.json() }, expected('The upstream answered with a body that is not well-formed XML: Expected closing tag \'Status\' (opened in line 1, col 9) instead of closing tag \'Answer\'. (line 1).'))
  t.equal(target.hits(), 0, 'no external entity was fetched')
})

t.test('a value that is not one root element cannot be written as XML; a field path through a text element fails: 400 naming why', async (t) => {
  const { backend, send } = await gateway(t, xml('<ok/>'))
  const two = await send('POST', '/two-roots', JSON.stringify({ a: 1, b: 2 }))
  t.same({ status: two.statusCode, body: two.json() }, { status: 400, body: { error: 'transform_failed', location: 'body', path: '', message: 'The transformed body cannot be written as XML: an XML body has one root element (given 2: A, B).' } })
  const text = await send('POST', '/xml-in', '<Order>text</Order>', 'application/xml')
  t.same({ status: text.statusCode, body: text.json() }, { status: 400, body: { error: 'transform_failed', location: 'body', path: 'Order', message: 'cannot change field "Order": Order is not an object or array' } })
  t.equal(backend.seen.length, 0)
})
