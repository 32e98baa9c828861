import t, { type Test } from 'tap'
import { ConfigError } from '../../src/config/config-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { apiKeyHashes, KEYS } from '../helpers/api-key-config.js'
import { VALIDATION_AMOUNT, validationFixture, validationYaml } from '../helpers/validation-config.js'
import { buildTestApp, getToken } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { startBackend } from '../helpers/upstream-servers.js'

const hashes = await apiKeyHashes()

/** request-validation on a proxy block (streamed body, real backend) and on the payments route (parsed body). */
async function proxyGateway (t: Test) {
  const backend = await startBackend(t, 'pricing')
  backend.handle((req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ url: req.url, body }))
  })
  const gw = await buildTestApp({ yaml: validationYaml(hashes, backend.url) })
  t.teardown(() => gw.close())
  const send = (options: { url?: string, method?: 'GET' | 'PUT', headers?: Record<string, string>, payload?: string }) => gw.app.inject({
    method: options.method ?? 'PUT',
    url: options.url ?? '/legacy/pricing/prices/1',
    headers: { 'x-api-key': KEYS.till, 'x-till-id': 'till-7', 'content-type': 'application/json', ...options.headers },
    ...(options.payload === undefined ? {} : { payload: options.payload }),
  })
  return { backend, send }
}

t.test('a valid request reaches the backend with its body byte for byte', async (t) => {
  const { backend, send } = await proxyGateway(t)
  const payload = '{ "amount" : 5,  "note": "caf\\u00e9 ü" }'
  const res = await send({ url: '/legacy/pricing/prices/1?currency=eur&page=2', payload })
  t.same({ status: res.statusCode, body: res.json() }, { status: 200, body: { url: '/prices/1?currency=eur&page=2', body: payload } })
  const get = await send({ method: 'GET', headers: { 'content-type': '' } })
  t.equal(get.statusCode, 200, 'a GET without a body is not asked for one')
  t.equal(backend.seen.length, 2)
})

t.test('body, query and header mismatches are 400s naming location, path and keyword; the backend is not called', async (t) => {
  const { backend, send } = await proxyGateway(t)
  const cases: Array<[Parameters<typeof send>[0], Record<string, unknown>]> = [
    [{ payload: '{"amount":0}' }, { location: 'body', path: '/amount', keyword: 'minimum', message: 'body /amount must be >= 1' }],
    [{ payload: '{"note":"x"}' }, { location: 'body', path: '/amount', keyword: 'required', message: 'body /amount must have required property \'amount\'' }],
    [{ payload: '{"amount":1,"extra":true}' }, { location: 'body', path: '/extra', keyword: 'additionalProperties', message: 'body /extra must NOT have additional properties' }],
    [{ payload: '{"amount":' }, { location: 'body', path: '', keyword: 'json', message: 'body is not valid JSON' }],
    [{}, { location: 'body', path: '', keyword: 'type', message: 'body must be object' }],
    [{ url: '/legacy/pricing/prices/1?currency=gbp', payload: '{"amount":1}' }, { location: 'query', path: '/currency', keyword: 'enum', message: 'query /currency must be equal to one of the allowed values' }],
    [{ url: '/legacy/pricing/prices/1?page=0', payload: '{"amount":1}' }, { location: 'query', path: '/page', keyword: 'minimum', message: 'query /page must be >= 1' }],
    [{ headers: { 'x-till-id': 'pos-1' }, payload: '{"amount":1}' }, { location: 'headers', path: '/x-till-id', keyword: 'pattern', message: 'headers /x-till-id must match pattern "^till-[0-9]+$"' }],
  ]
  for (const [request, fields] of cases) {
    const res = await send(request)
    t.same({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: 'bad_request', ...fields } }, String(fields.message))
  }
  t.equal(backend.seen.length, 0)
})

t.test('a body over the route\'s max_body_bytes is 413 and a non-JSON body 415, before the backend', async (t) => {
  const { backend, send } = await proxyGateway(t)
  const big = await send({ payload: JSON.stringify({ amount: 1, note: 'x'.repeat(2000) }) })
  t.same({ status: big.statusCode, body: big.json() }, { status: 413, body: { error: 'payload_too_large', message: 'The request body is larger than this route accepts.' } })
  const text = await send({ payload: 'amount=1', headers: { 'content-type': 'text/plain' } })
  t.same({ status: text.statusCode, body: text.json() }, { status: 415, body: { error: 'unsupported_media_type', message: 'This route accepts a JSON body (application/json) only.' } })
  t.equal(backend.seen.length, 0)
})

t.test('on a parsed-body route (payments create_intent) the handler still reads the body; 400s in the payments envelope', async (t) => {
  const yaml = gatewayFixture()
    .append('services.payments.routes.create_intent', { 'request-validation': { body: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer', minimum: 100 } } } } })
    .text()
  const gw = await buildTestApp({ yaml })
  t.teardown(() => gw.close())
  const token = await getToken(gw.app, 'demo-checkout')
  const post = (payload: unknown) => gw.app.inject({ method: 'POST', url: '/api/v1/ecommerce/payment-intents', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
  const low = await post({ organization_id: 'org_hq_demo', amount: 50, currency: 'usd' })
  t.same({ status: low.statusCode, body: low.json() }, { status: 400, body: { success: false, message: 'body /amount must be >= 100', location: 'body', path: '/amount', keyword: 'minimum' } })
  const ok = await post({ organization_id: 'org_hq_demo', amount: 150, currency: 'usd' })
  t.equal(ok.statusCode, 201, ok.body)
  t.match(ok.json(), { success: true, data: { amount: 150, currency: 'usd' } })
})

t.test('a schema that is not a valid JSON Schema is a config error at its YAML path', async (t) => {
  const bad = validationFixture(hashes, 'http://127.0.0.1:9').set(`${VALIDATION_AMOUNT}.minimum`, 'one').text()
  const error = await parseGatewayConfig(bad, 'gateway.yaml', { env: {} }).catch((e: unknown) => e)
  t.ok(error instanceof ConfigError)
  t.match((error as ConfigError).message, /services\.pricing\.routes\.read_price\.policies\[0\]\.request-validation\.body\.properties\.amount\.minimum: not a valid JSON Schema: must be number/)
  const typo = validationFixture(hashes, 'http://127.0.0.1:9').rename(`${VALIDATION_AMOUNT}.minimum`, 'minimun').text()
  const strict = await parseGatewayConfig(typo, 'gateway.yaml', { env: {} }).catch((e: unknown) => e)
  t.match((strict as ConfigError).message, /request-validation\.body: not a usable JSON Schema: strict mode: unknown keyword: "minimun"/)
})
