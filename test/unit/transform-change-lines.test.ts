import t from 'tap'
import { changeLines } from '../../plugins/transform/change-lines.js'
import { routesJson, servedRoutes } from '../../src/describe/route-table.js'
import { loadGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

t.test('a transform\'s change lines: each change of each part in the order they apply, then the SOAP call', async (t) => {
  t.same(changeLines({
    max_body_bytes: 1024,
    map_timeout_ms: 50,
    request: {
      query: { rename: { cur: 'currency' }, remove: ['debug'] },
      headers: { set: { 'x-store': '{params.store}' } },
      body: { from: 'json', map: '{ "Sku": sku }', to: 'xml' },
    },
    response: { body: { from: 'xml', rename: { 'Price.Amount': 'price' }, set: { source: { via: 'lanegate' } } } },
    soap: { version: '1.1', namespace: 'urn:prices', operation: 'GetPrice', action: 'urn:prices#GetPrice' },
    xml: { attribute_prefix: '@', text_key: '#text', arrays: [], namespaces: 'strip' },
  }), [
    'request headers: set x-store = {params.store}',
    'request query: rename cur → currency',
    'request query: remove debug',
    'request body: read as json',
    'request body: map { "Sku": sku }',
    'request body: written as xml',
    'response body: read as xml',
    'response body: rename Price.Amount → price',
    'response body: set source = {"via":"lanegate"}',
    'SOAP 1.1 GetPrice (urn:prices), action urn:prices#GetPrice',
  ])
})

t.test('routes --json gives a link\'s details only where its policy has some (the transform), not on other links', async (t) => {
  const file = await gatewayFixture()
    .append('services.pricing.routes.list_prices.policies', { transform: { request: { query: { remove: ['debug'] } } } })
    .write()
  t.teardown(() => file.remove())
  const { config, catalog } = await loadGatewayConfig(file.file)
  const { routes } = routesJson(servedRoutes(config, catalog)) as { routes: Array<{ route: string, chain: Array<{ policy: string, details?: string[] }> }> }
  const withDetails = routes.flatMap((r) => r.chain.filter((l) => l.details !== undefined).map((l) => [r.route, l.policy, l.details]))
  t.same(withDetails, [['list_prices', 'transform', ['request query: remove debug']]])
})
