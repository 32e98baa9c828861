import t, { type Test } from 'tap'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { buildTestApp } from '../helpers/build-app.js'
import { transformYaml } from '../helpers/transform-config.js'
import { startSoapStoreSimulator, STORE_NS } from '../simulators/soap-store-simulator.js'

const hashes = await apiKeyHashes()

/** A JSON API over the SOAP store system: GET an item, POST a reservation (the operation that may answer a Fault). */
function routes (version: '1.1' | '1.2'): string {
  return `
      item:
        methods: [GET]
        path: "/items/:sku"
        policies:
          - transform:
              soap: { version: "${version}", namespace: "${STORE_NS}", operation: GetItem, action: "${STORE_NS}#GetItem" }
              request: { body: { map: '{ "sku": $params.sku }' } }
              response: { body: { map: '{ "sku": sku, "name": name, "price": $number(price), "in_stock": $number(stock) }' } }
      reserve:
        methods: [POST]
        path: "/items/:sku/reservations"
        policies:
          - transform:
              soap: { version: "${version}", namespace: "${STORE_NS}", operation: ReserveStock, action: "${STORE_NS}#ReserveStock" }
              request: { body: { map: '{ "sku": $params.sku, "quantity": quantity }' } }
              response: { body: { rename: { reservation: id }, map: '{ "id": id, "left": $number(left) }' } }
`
}

async function gateway (t: Test, version: '1.1' | '1.2') {
  const store = await startSoapStoreSimulator({ version })
  t.teardown(() => store.close())
  const gw = await buildTestApp({ yaml: transformYaml(hashes, `${store.url}/store`, routes(version)) })
  t.teardown(() => gw.close())
  const send = (method: 'GET' | 'POST', url: string, payload?: unknown) => gw.app.inject({
    method,
    url: `/legacy/pricing${url}`,
    headers: { 'x-api-key': KEYS.till, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  })
  return { store, send }
}

const ENVELOPE = { '1.1': 'http://schemas.xmlsoap.org/soap/envelope/', '1.2': 'http://www.w3.org/2003/05/soap-envelope' }

for (const version of ['1.1', '1.2'] as const) {
  t.test(`SOAP ${version}: a JSON GET calls GetItem and gets the answer's Body as JSON`, async (t) => {
    const { store, send } = await gateway(t, version)
    const res = await send('GET', '/items/sku-100?ignored=1')
    t.same({ status: res.statusCode, type: res.headers['content-type'], body: res.json() }, {
      status: 200, type: 'application/json; charset=utf-8', body: { sku: 'sku-100', name: 'Sourdough loaf', price: 4.2, in_stock: 12 },
    })
    t.equal(store.seen.length, 1)
    const call = store.seen[0]!
    t.equal(call.body, `<soap:Envelope xmlns:soap="${ENVELOPE[version]}"><soap:Body><op:GetItem xmlns:op="${STORE_NS}"><sku>sku-100</sku></op:GetItem></soap:Body></soap:Envelope>`)
    if (version === '1.1') {
      t.equal(call.headers['content-type'], 'text/xml; charset=utf-8')
      t.equal(call.headers.soapaction, `"${STORE_NS}#GetItem"`)
    } else {
      t.equal(call.headers['content-type'], `application/soap+xml; charset=utf-8; action="${STORE_NS}#GetItem"`)
      t.notOk('soapaction' in call.headers)
    }
  })

  t.test(`SOAP ${version}: a JSON POST calls ReserveStock; its Fault is upstream_error with the fault's code and string`, async (t) => {
    const { send } = await gateway(t, version)
    const ok = await send('POST', '/items/sku-200/reservations', { quantity: 2 })
    t.same({ status: ok.statusCode, body: ok.json() }, { status: 200, body: { id: 'R-1', left: 1 } })
    const short = await send('POST', '/items/sku-200/reservations', { quantity: 5 })
    const code = version === '1.1' ? 'soap:Client' : 'soap:Sender'
    t.same({ status: short.statusCode, body: short.json() }, {
      status: 500,
      body: {
        error: 'upstream_error',
        upstream_status: 500,
        upstream_body: '',
        fault_code: code,
        fault_string: 'Not enough stock of sku-200: 1 left, 5 asked',
        message: 'The upstream answered with a SOAP Fault: Not enough stock of sku-200: 1 left, 5 asked',
      },
    })
    const unknown = await send('GET', '/items/nope')
    t.same({ status: unknown.statusCode, body: unknown.json() }, {
      status: 500,
      body: { error: 'upstream_error', upstream_status: 500, upstream_body: '', fault_code: code, fault_string: 'Unknown item nope', message: 'The upstream answered with a SOAP Fault: Unknown item nope' },
    })
  })
}

t.test('a SOAP answer that is not an envelope is 502 protocol; a mapping failure on the request is 400 before the call', async (t) => {
  const { startBackend } = await import('../helpers/upstream-servers.js')
  const backend = await startBackend(t, 'not-soap')
  backend.handle((_req, res) => { res.writeHead(200, { 'content-type': 'text/xml' }); res.end('<html><body>maintenance</body></html>') })
  const gw = await buildTestApp({ yaml: transformYaml(hashes, backend.url, routes('1.1')) })
  t.teardown(() => gw.close())
  const res = await gw.app.inject({ method: 'GET', url: '/legacy/pricing/items/sku-100', headers: { 'x-api-key': KEYS.till } })
  t.same({ status: res.statusCode, body: res.json() }, { status: 502, body: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'protocol', upstream_body: '', message: 'The upstream answered with a body that is not a SOAP envelope.' } })
  const notJson = await gw.app.inject({ method: 'POST', url: '/legacy/pricing/items/sku-100/reservations', headers: { 'x-api-key': KEYS.till, 'content-type': 'application/json' }, payload: '{"quantity":' })
  t.same({ status: notJson.statusCode, body: notJson.json() }, { status: 400, body: { error: 'transform_failed', location: 'body', path: '', message: 'The request body is not valid JSON.' } })
  t.same(backend.seen.map((s) => [s.method, s.url]), [['POST', '/']], 'one call, by POST to the target\'s URL')
})

t.test('/openapi.json gives a relayed route the JSON shape its request-validation declares (the SOAP store demo)', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const { repoPath } = await import('../helpers/paths.js')
  const yaml = await readFile(repoPath('examples/gateway.soap-store.yaml'), 'utf8')
  const gw = await buildTestApp({ yaml, env: { LANEGATE_ADMIN_PORT: '0' } })
  t.teardown(() => gw.close())
  const res = await gw.app.inject({ url: '/openapi.json' })
  const paths = (res.json() as { paths: Record<string, Record<string, { requestBody?: unknown }>> }).paths
  t.same(paths['/store-api/v1/items/{sku}/reservations']?.post?.requestBody, {
    required: true,
    description: 'Checked against the route\'s request-validation schema before it is relayed.',
    content: { 'application/json': { schema: { type: 'object', required: ['quantity'], additionalProperties: false, properties: { quantity: { type: 'integer', minimum: 1 } } } } },
  })
  t.equal(paths['/store-api/v1/items/{sku}']?.get?.requestBody, undefined, 'a GET declares no body')
})
