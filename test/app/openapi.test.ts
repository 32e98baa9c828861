import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import t from 'tap'
import { createSchema } from '../../src/services/payments/intent-body.js'
import { salesDailyTotals } from '../../src/services/reports/definitions/sales-daily-totals.js'
import { buildTestApp, type TestApp } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** One demo gateway for the file's read-only cases (each reads the document it serves), booted at first use. */
let demo: Promise<TestApp> | undefined
function demoApp (): Promise<TestApp> {
  demo ??= gatewayFixture().boot(t)
  return demo
}

async function documentOf (gw: Awaited<ReturnType<typeof buildTestApp>>): Promise<Json> {
  const res = await gw.app.inject({ method: 'GET', url: '/openapi.json' })
  if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}: ${res.body}`)
  return res.json() as Json
}

t.test('GET /openapi.json needs no token and is a valid OpenAPI 3.1 document', async (t) => {
  const gw = await demoApp()
  const res = await gw.app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  const document = res.json() as Json
  t.equal(document.openapi, '3.1.0')
  const validator = new Validator()
  t.same(await validator.validate(document), { valid: true })
  t.equal(validator.version, '3.1')
  // The validator is not a rubber stamp: the same document without `info` fails.
  const { info: _info, ...broken } = document
  t.equal((await new Validator().validate(broken)).valid, false)
})

t.test('the oauth2 client-credentials scheme carries the issuer\'s token URL and every scope of gateway.yaml', async (t) => {
  const gw = await demoApp()
  const document = await documentOf(gw)
  const scopes = gw.gateway.current().config.scopes
  t.same(document.components.securitySchemes.oauth2, {
    type: 'oauth2',
    description: 'OAuth 2.0 client credentials: POST the client id and secret to the token URL, send the token as `Authorization: Bearer`.',
    flows: {
      clientCredentials: {
        tokenUrl: 'http://localhost:8080/oauth/token',
        scopes: Object.fromEntries(Object.entries(scopes).map(([name, s]) => [name, s.description])),
      },
    },
  })
  t.equal(Object.keys(document.components.securitySchemes.oauth2.flows.clientCredentials.scopes).length, 15)
})

t.test('create_intent: its scope as security, the payments body schema, errors in the payments envelope', async (t) => {
  const gw = await demoApp()
  const operation = (await documentOf(gw)).paths['/api/v1/ecommerce/payment-intents'].post
  t.equal(operation.operationId, 'payments.create_intent')
  t.same(operation.security, [{ oauth2: ['commerce:payment-intents.create'] }])
  t.same(operation.requestBody, { required: true, content: { 'application/json': { schema: createSchema } } })
  t.same(Object.keys(operation.responses), ['400', '401', '403', '404', '409', '413', '415', '422', '429', '503', '2XX'])
  t.same(operation.responses['403'], {
    description: 'forbidden: Forbidden.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/error-payments' }, examples: { forbidden: { value: { success: false, message: 'Forbidden.' } } } } },
  })
  t.same(operation.responses['429'].content['application/json'], {
    schema: { $ref: '#/components/schemas/error-payments-rate-limited' },
    examples: { too_many_requests: { value: { error: 'Too many requests', retry_after: 30 } } },
  })
})

t.test('exchange routes: path templates from fastify syntax, store_not_found from the organization policy', async (t) => {
  const gw = await demoApp()
  const item = (await documentOf(gw)).paths['/v1/stores/{store_org_id}/live/{path}']
  t.same(Object.keys(item), ['get', 'post', 'put', 'patch', 'delete'])
  t.same(item.get.parameters, [
    { name: 'store_org_id', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'path', in: 'path', required: true, schema: { type: 'string' }, description: 'The rest of the path (fastify wildcard `*`), slashes included.' },
  ])
  t.same(item.post.security, [{ oauth2: ['exchange:live.write'] }])
  t.same(item.get.responses['404'].content['application/json'].examples, {
    store_not_found: { value: { error: 'store_not_found', message: 'Store not found or not accessible.' } },
  })
  t.same(item.get.responses['401'].content['application/json'].examples.unauthenticated, { value: { error: 'Unauthenticated.' } })
})

t.test('a proxy service\'s routes (declared in its settings) are described with their scopes and relay errors', async (t) => {
  const gw = await demoApp()
  const paths = (await documentOf(gw)).paths as Json
  t.same(Object.keys(paths).filter((p) => p.startsWith('/legacy/pricing')), ['/legacy/pricing/prices', '/legacy/pricing/prices/{sku}'])
  const item = paths['/legacy/pricing/prices/{sku}']
  t.same(Object.keys(item), ['get', 'put'])
  t.same([item.get.operationId, item.get.security, item.get.requestBody], ['pricing.read_price', [{ oauth2: ['pricing:read'] }], undefined])
  t.same([item.put.operationId, item.put.security, item.put.requestBody.content], ['pricing.write_price', [{ oauth2: ['pricing:write'] }], { '*/*': { schema: {} } }])
  t.same(Object.keys(item.put.responses['502'].content['application/json'].examples), ['upstream_error'])
  t.same(Object.keys(item.put.responses['413'].content['application/json'].examples), ['payload_too_large'])
})

t.test('the reports registry: GET /v1/reports and GET /v1/reports/{report_id} (404 report_not_found)', async (t) => {
  const gw = await demoApp()
  const paths = (await documentOf(gw)).paths as Json
  t.same(paths['/v1/reports'].get.security, [{ oauth2: ['exchange:reports.run'] }])
  t.same(paths['/v1/reports/{report_id}'].get.responses['404'].content['application/json'].examples.report_not_found.value.error, 'report_not_found')
})

t.test('request bodies: each report\'s parameter_schema and each fan-out operation\'s payload_schema', async (t) => {
  const gw = await demoApp()
  const document = await documentOf(gw)
  const reports = document.paths['/v1/reports/{report_id}/run'].post.requestBody.content['application/json'].schema
  t.same(reports.oneOf.map((s: Json) => s.title), ['sales.daily_totals', 'sales.by_department'])
  const daily = reports.oneOf.find((s: Json) => s.title === salesDailyTotals.report_id)
  t.same(daily, { ...salesDailyTotals.parameter_schema, title: salesDailyTotals.report_id, description: `report_id ${salesDailyTotals.report_id}: ${salesDailyTotals.description}` })
  const fanout = document.paths['/v1/fanout/preview'].post.requestBody.content['application/json'].schema
  const payloadSchema = (gw.gateway.current().config.services.fanout as Json).operations['price-change'].payload_schema
  t.same(fanout.oneOf, [{
    type: 'object',
    title: 'price-change',
    description: 'Change the shelf price of one product in every targeted store',
    additionalProperties: false,
    required: ['operation_type', 'payload', 'store_org_ids'],
    properties: {
      operation_type: { const: 'price-change' },
      payload: payloadSchema,
      store_org_ids: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Stores of the caller\'s tree to preview at.' },
    },
  }])
})

t.test('the token endpoint (form body, client credentials) and the metadata and JWKS endpoints are described', async (t) => {
  const gw = await demoApp()
  const { paths } = await documentOf(gw)
  const token = paths['/oauth/token'].post
  t.same(token.requestBody.content['application/x-www-form-urlencoded'].schema.properties.grant_type, { const: 'client_credentials' })
  t.same(token.security, [{ clientBasic: [] }, {}])
  t.same(Object.keys(token.responses), ['200', '400', '401', '429'])
  t.same(token.responses['401'].content['application/json'].examples, {
    invalid_client: { value: { error: 'invalid_client', error_description: 'Client authentication failed.' } },
  })
  t.same(paths['/.well-known/jwks.json'].get.security, [])
  t.same(paths['/.well-known/oauth-authorization-server'].get.security, [])
})

t.test('the document follows a hot reload (generated once per config version)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-openapi-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // Relative paths follow the config's folder: the data and content folders are named absolutely.
  const demo = gatewayFixture().set('server.data_dir', join(dir, 'data'))
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, demo.text())
  const gw = await buildTestApp({ file })
  t.teardown(() => gw.close())
  const first = await gw.app.inject({ method: 'GET', url: '/openapi.json' })
  const again = await gw.app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(again.body, first.body)
  t.equal((first.json() as Json).info.version, '1')
  await writeFile(file, demo.set('services.payments.routes.create_intent', [{ scope: { all: ['commerce:payment-intents.create', 'commerce:payment-intents.read'] } }]).text())
  t.match(await gw.gateway.reload(), { outcome: 'applied', version: 2 })
  const reloaded = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json
  t.equal(reloaded.info.version, '2')
  t.same(reloaded.paths['/api/v1/ecommerce/payment-intents'].post.security, [{ oauth2: ['commerce:payment-intents.create', 'commerce:payment-intents.read'] }])
})
