import t, { type Test } from 'tap'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { buildTestApp } from '../helpers/build-app.js'
import { transformYaml } from '../helpers/transform-config.js'
import { startBackend, type BackendHandler } from '../helpers/upstream-servers.js'

const hashes = await apiKeyHashes()

/** Routes of the pricing block: each with api-key (from the block) and its own transform. */
const ROUTES = `
      reshape:
        methods: [POST]
        path: "/orders/:store"
        policies:
          - transform:
              request:
                body:
                  rename: { customer.name: buyer }
                  remove: [debug]
                  set: { source: gateway, meta.version: 2 }
                  map: '$merge([$, { "store": $params.store, "channel": $query.channel, "client": $principal.client_id }])'
              response:
                body:
                  rename: { total_cents: total }
                  map: '{ "order": id, "total": total, "lines": $count(lines), "status": $status }'
                headers: { rename: { x-legacy-id: x-order-id }, remove: [x-internal], set: { x-caller: "{{principal.client_id}}" } }
      names:
        methods: [GET]
        path: "/prices/:sku"
        policies:
          - transform:
              request:
                headers: { rename: { x-till: x-till-id }, remove: [x-debug], set: { x-client: "{{principal.client_id}}", x-sku: "sku-{{params.sku}}" } }
                query: { rename: { cur: currency }, remove: [trace], set: { org: "{{principal.organization_id}}" } }
      small:
        methods: [GET, POST]
        path: "/small"
        policies:
          - transform:
              max_body_bytes: 64
              request: { body: { set: { checked: true } } }
              response: { body: { remove: [secret] } }
      failing:
        methods: [POST]
        path: "/failing"
        policies:
          - transform:
              request: { body: { set: { name.first: x }, map: '$number(amount)' } }
`

async function gateway (t: Test, handler: BackendHandler) {
  const backend = await startBackend(t, 'orders')
  backend.handle(handler)
  const gw = await buildTestApp({ yaml: transformYaml(hashes, backend.url, ROUTES) })
  t.teardown(() => gw.close())
  const send = (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) => gw.app.inject({
    method,
    url: `/legacy/pricing${url}`,
    headers: { 'x-api-key': KEYS.till, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  })
  return { backend, send, gw }
}

function json (status: number, body: unknown, headers: Record<string, string> = {}): BackendHandler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  }
}

t.test('the request body is reshaped (rename, remove, set, then a JSONata map with params, query and principal) and the answer too', async (t) => {
  const { backend, send } = await gateway(t, json(201, { id: 'o-1', total_cents: 1250, lines: [1, 2, 3] }, { 'x-legacy-id': 'L9', 'x-internal': 'secret' }))
  const res = await send('POST', '/orders/s-42?channel=pos', { customer: { name: 'Ada', id: 7 }, debug: true, lines: [{ sku: 'a' }] })
  t.equal(res.statusCode, 201)
  t.same(res.json(), { order: 'o-1', total: 1250, lines: 3, status: 201 })
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)))
  t.equal(res.headers['x-order-id'], 'L9')
  t.equal(res.headers['x-caller'], 'till-legacy')
  t.notOk('x-legacy-id' in res.headers)
  t.notOk('x-internal' in res.headers)
  t.equal(backend.seen.length, 1)
  const seen = backend.seen[0]!
  t.same(JSON.parse(seen.body), {
    customer: { id: 7 }, lines: [{ sku: 'a' }], buyer: 'Ada', source: 'gateway', meta: { version: 2 }, store: 's-42', channel: 'pos', client: 'till-legacy',
  })
  t.equal(seen.headers['content-type'], 'application/json')
  t.equal(seen.headers['content-length'], String(Buffer.byteLength(seen.body)))
  t.equal(seen.headers['accept-encoding'], 'identity', 'the answer is asked for uncompressed, to be read')
  t.equal(seen.url, '/orders/s-42?channel=pos')
})

t.test('headers and query parameters are renamed, removed and set, with values from the principal and route parameters', async (t) => {
  const { backend, send } = await gateway(t, json(200, { ok: true }))
  const res = await send('GET', '/prices/abc?cur=eur&trace=1&page=2&org=spoofed', undefined, { 'x-till': 'till-7', 'x-debug': '1', 'x-client': 'spoofed' })
  t.same({ status: res.statusCode, body: res.json() }, { status: 200, body: { ok: true } }, 'no body change: the answer streams through untouched')
  const seen = backend.seen[0]!
  t.equal(seen.url, '/prices/abc?page=2&currency=eur&org=org_hq_demo')
  t.equal(seen.headers['x-till-id'], 'till-7')
  t.equal(seen.headers['x-client'], 'till-legacy')
  t.equal(seen.headers['x-sku'], 'sku-abc')
  t.notOk('x-till' in seen.headers)
  t.notOk('x-debug' in seen.headers)
})

t.test('a request body the changes cannot take is 400 transform_failed naming the path; the backend is not called', async (t) => {
  const { backend, send } = await gateway(t, json(200, {}))
  const cases: Array<[unknown, Record<string, unknown>]> = [
    ['{"amount":', { location: 'body', path: '', message: 'The request body is not valid JSON.' }],
    [{ name: 'flat', amount: '5' }, { location: 'body', path: 'name', message: 'cannot change field "name": name is not an object or array' }],
    [[1, 2], { location: 'body', path: 'name.first', message: 'cannot change field "name.first": the body is an array: "name" is not an index' }],
    [{ amount: 'five' }, { location: 'body', path: 'map', position: 8, message: 'the mapping failed: Unable to cast value to a number: "five" at character 8 (number)' }],
    ['"text"', { location: 'body', path: '', message: 'cannot change field of the body: the body is not a JSON object or array' }],
  ]
  for (const [payload, fields] of cases) {
    const res = await send('POST', '/failing', payload)
    t.same({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: 'transform_failed', ...fields } }, JSON.stringify(payload))
  }
  const ok = await send('POST', '/failing', { amount: '5' })
  t.same({ status: ok.statusCode, body: ok.json() }, { status: 200, body: {} })
  t.same(backend.seen.map((s) => s.body), ['5'], 'only the mapped body reached the backend')
})

t.test('a request body over max_body_bytes is 413, declared or streamed; a non-JSON body 415', async (t) => {
  const { backend, send, gw } = await gateway(t, json(200, {}))
  const big = await send('POST', '/small', { pad: 'x'.repeat(100) })
  t.same({ status: big.statusCode, body: big.json() }, { status: 413, body: { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' } })
  const { Readable } = await import('node:stream')
  const streamed = await gw.app.inject({
    method: 'POST',
    url: '/legacy/pricing/small',
    headers: { 'x-api-key': KEYS.till, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    payload: Readable.from([Buffer.from('{"pad":"'), Buffer.from('y'.repeat(100)), Buffer.from('"}')]),
  })
  t.same({ status: streamed.statusCode, body: streamed.json() }, { status: 413, body: { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' } })
  const text = await send('POST', '/small', 'a=1', { 'content-type': 'text/plain' })
  t.same({ status: text.statusCode, body: text.json() }, { status: 415, body: { error: 'unsupported_media_type', message: 'This route transforms a JSON body (application/json) only.' } })
  t.equal(backend.seen.length, 0)
})

t.test('an answer over max_body_bytes is 502 too_large, declared or chunked, and is not read to its end', async (t) => {
  let cut = 0
  const { send } = await gateway(t, (req, res) => {
    res.on('close', () => { if (!res.writableFinished) cut++ })
    if (req.url?.includes('declared') === true) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000000' })
      res.write('{"pad":"')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    // Far more than the bound, in chunks: the gateway stops reading after 64 bytes and drops the connection.
    let sent = 0
    const more = () => {
      while (sent < 8 * 1024 * 1024) {
        sent += 16384
        if (!res.write('x'.repeat(16384))) { res.once('drain', more); return }
      }
      res.end()
    }
    res.write('{"pad":"')
    more()
  })
  const expected = { status: 502, body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'too_large', upstream_body: '', message: 'The upstream service answered with a body larger than 64 bytes.' } }
  const declared = await send('GET', '/small?declared=1')
  t.same({ status: declared.statusCode, body: declared.json() }, expected)
  const chunked = await send('GET', '/small')
  t.same({ status: chunked.statusCode, body: chunked.json() }, expected)
  const { waitFor } = await import('../helpers/wait-for.js')
  await waitFor(() => cut === 2, { what: 'both answers cut off before their end' })
})

t.test('an answer that is not JSON is 502 protocol without its body; an upstream 4xx/5xx stays upstream_error', async (t) => {
  const bodies: Record<string, [number, string]> = { '/small': [200, '<html>oops</html>'] }
  const { send, backend } = await gateway(t, (req, res) => {
    const [status, body] = bodies[req.url ?? ''] ?? [500, '{"error":"boom","detail":"' + 'd'.repeat(9000) + '"}']
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(body)
  })
  const bad = await send('GET', '/small')
  t.same({ status: bad.statusCode, body: bad.json() }, { status: 502, body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'protocol', upstream_body: '', message: 'The upstream answered with a body that is not valid JSON.' } })
  bodies['/small'] = [200, '{"secret":1,"price":3}']
  const good = await send('GET', '/small')
  t.same({ status: good.statusCode, body: good.json() }, { status: 200, body: { price: 3 } })
  delete bodies['/small']
  const failing = await send('GET', '/small')
  const body = failing.json() as Record<string, unknown>
  t.equal(failing.statusCode, 500)
  t.same({ ...body, upstream_body: (body.upstream_body as string).length }, { error: 'upstream_error', upstream_status: 500, upstream_body: 8192 + ' [truncated]'.length, message: 'The upstream service answered 500.' })
  t.equal(backend.seen.length, 3)
})

t.test('options are checked at load with their YAML path: a JSONata syntax error, an unknown placeholder, nothing to do', async (t) => {
  const bad = ROUTES
    .replace(`map: '$number(amount)'`, `map: 'amount.('`)
    .replace('x-sku: "sku-{{params.sku}}"', 'x-sku: "{{principal.email}}"')
    .replace('path: "/small"\n        policies:\n', 'path: "/small"\n        policies:\n          - transform: {}\n')
  const error = await buildTestApp({ yaml: transformYaml(hashes, 'http://127.0.0.1:9', bad) }).then(() => undefined, (e: Error) => e)
  if (error === undefined) throw new Error('the config was accepted')
  t.equal(error.message, [
    'gateway.yaml: 3 configuration errors',
    '  gateway.yaml:68 services.pricing.routes.names.policies[0].transform.request.headers.set.x-sku: unknown placeholder {{principal.email}} (known: subject, client_id, organization_id, token_type)',
    '  gateway.yaml:74 services.pricing.routes.small.policies[0].transform: nothing to transform: give `request`, `response` or `soap`',
    '  gateway.yaml:84 services.pricing.routes.failing.policies[0].transform.request.body.map: not a valid JSONata expression: Expected ")" before end of expression at character 8 ((end))',
  ].join('\n'))
})

t.test('body and query changes on a route the gateway answers itself are refused at load; header changes are allowed', async (t) => {
  const { gatewayFixture } = await import('../helpers/gateway-fixture.js')
  const withTransform = (transform: unknown): string => gatewayFixture().set('services.content.routes.content_list', [{ scope: { all: ['engage:content.view'] } }, { transform }]).text()
  const yaml = withTransform({ request: { query: { remove: ['x'] }, headers: { remove: ['x-debug'] } }, response: { body: { remove: ['secret'] } } })
  t.not(yaml, gatewayFixture().text())
  // The line of the edited route in the text booted.
  const at = yaml.split('\n').findIndex((l) => l.includes('content_list:')) + 1
  const error = await buildTestApp({ yaml }).then(() => undefined, (e: Error) => e)
  t.equal(error?.message, [
    'gateway.yaml: 2 configuration errors',
    `  gateway.yaml:${at} services.content.routes.content_list[1].transform.request.query: body and query changes apply only on relayed routes (the live service, \`type: proxy\` services)`,
    `  gateway.yaml:${at} services.content.routes.content_list[1].transform.response.body: body and query changes apply only on relayed routes (the live service, \`type: proxy\` services)`,
  ].join('\n'))
  const headersOnly = await buildTestApp({ yaml: withTransform({ response: { headers: { set: { 'x-served-by': 'lanegate' } } } }) })
  await headersOnly.close()
})

t.test('on the live service too: a lane\'s JSON answer is reshaped on its way to the caller', async (t) => {
  const { apiKeyConfig } = await import('../helpers/api-key-config.js')
  const lane = await startBackend(t, 'lane')
  lane.handle(json(200, { ITEM_NO: 'a1', QTY_ON_HAND: '7' }))
  const yaml = apiKeyConfig({ hashes, backend: lane.url, live: true })
    .replace('        - organization: { param: store_org_id, not_found: true }\n', `        - organization: { param: store_org_id, not_found: true }
        - transform: { response: { body: { map: '{ "sku": ITEM_NO, "on_hand": $number(QTY_ON_HAND) }' } } }\n`)
  t.match(yaml, /transform: \{ response/)
  const gw = await buildTestApp({ yaml })
  t.teardown(() => gw.close())
  const res = await gw.app.inject({ url: '/v1/stores/org_store_001/live/items/a1', headers: { 'x-api-key': KEYS.till } })
  t.same({ status: res.statusCode, body: res.json() }, { status: 200, body: { sku: 'a1', on_hand: 7 } })
  t.equal(lane.seen[0]?.url, '/items/a1')
})
