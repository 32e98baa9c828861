import t from 'tap'
import { ConfigError } from '../../src/config/config-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { declaredRoutes, moduleForService } from '../../src/services/service-module.js'
import { catalog } from '../../src/pipeline/registry.js'
import { proxyUpstreamSettings } from '../../src/services/proxy/upstream-settings.js'
import { proxySettings } from '../../src/services/proxy/settings.js'

/** A `type: proxy` block is validated by the real loader: its settings schema, its check, paths and lines. */
const file = (upstream: string, routes = '      read: { methods: [GET], path: "/prices/*" }', extra = ''): string => `issuer: { issuer: https://auth.test }
scopes: {}
services:
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
    upstream:
${upstream}
    policies: []
    routes:
${routes}
${extra}`

async function problemsOf (text: string): Promise<Array<[string, number | undefined, string]>> {
  const error = await parseGatewayConfig(text, 'gateway.yaml', { env: {} }).then(() => undefined, (e: unknown) => e)
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`)
  return error.problems.map((p) => [p.path, p.line, p.message])
}

t.test('a valid block gets its defaults, and two proxy blocks under names of their own coexist', async (t) => {
  const text = file('      targets: [ "http://127.0.0.1:9301", { url: "http://127.0.0.1:9302/base", weight: 2 } ]', undefined, `  inventory:
    type: proxy
    prefix: /legacy/inventory
    envelope: plain
    upstream: { targets: [ "http://127.0.0.1:9401" ], strip_prefix: false }
    routes:
      all: { methods: [GET, PUT], path: "/*" }
`)
  const { config } = await parseGatewayConfig(text, 'gateway.yaml', { env: {} })
  const pricing = proxySettings(config.services.pricing!)
  t.same(proxyUpstreamSettings(pricing.upstream!), {
    targets: [{ url: 'http://127.0.0.1:9301', weight: 1 }, { url: 'http://127.0.0.1:9302/base', weight: 2 }],
    balance: 'round_robin',
    max_sockets: 32,
    timeouts: { connect_ms: 2000, response_ms: 15000, body_idle_ms: 15000, stream_idle_ms: 300000 },
    retry: { attempts: 2, methods: ['GET', 'HEAD', 'OPTIONS'] },
    health: {},
    credential: undefined,
    label: 'The upstream service',
  } as never, 'engine settings (strip_prefix stays with the service)')
  t.equal(pricing.upstream!.strip_prefix, true)
  const inventory = config.services.inventory!
  const module = moduleForService(catalog.services, 'inventory', inventory)
  t.equal(module?.name, 'proxy')
  t.same(declaredRoutes(module!, inventory).map((r) => [r.id, r.method, r.url]), [['all', ['GET', 'PUT'], '/*']])
})

t.test('no targets, a weight of 0, attempts below 1 and lower-case methods are refused with path and line', async (t) => {
  t.same(await problemsOf(file('      targets: []')), [['services.pricing.upstream.targets', 9, 'must NOT have fewer than 1 items']])
  t.same(await problemsOf(file('      targets: [ { url: "http://a.test", weight: 0 } ]')), [['services.pricing.upstream.targets[0].weight', 9, 'must be >= 1']])
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]\n      retry: { attempts: 0, methods: [get] }')), [
    ['services.pricing.upstream.retry.attempts', 10, 'must be >= 1'],
    ['services.pricing.upstream.retry.methods[0]', 10, 'must be one of: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'],
  ])
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]', '      read: { methods: [get], path: "/prices/*" }')), [
    ['services.pricing.routes.read.methods[0]', 12, 'must be one of: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'],
  ])
})

t.test('duplicate and unparsable target URLs are refused with path and line', async (t) => {
  t.same(await problemsOf(file('      targets:\n        - "http://a.test:80/"\n        - { url: "http://a.test" }\n        - "http://b test"\n        - "http://u:p@c.test"')), [
    ['services.pricing.upstream.targets[1].url', 11, 'duplicate target (same as upstream.targets[0])'],
    ['services.pricing.upstream.targets[2]', 12, 'not a valid URL'],
    ['services.pricing.upstream.targets[3]', 13, 'must not carry a user name or password (use upstream.credential)'],
  ])
})

t.test('two routes serving one method on one path, and bad route paths, are refused', async (t) => {
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]', '      a: { methods: [GET], path: "/x/:id" }\n      b: { methods: [PUT, GET], path: "/x/:id" }\n      c: { methods: [GET], path: "/y/../z" }\n      d: { methods: [GET], path: "/*/z" }')), [
    ['services.pricing.routes.d.path', 15, 'must match pattern "^/(([A-Za-z0-9._~-]+|:[A-Za-z_][A-Za-z0-9_]*)/)*([A-Za-z0-9._~-]+|:[A-Za-z_][A-Za-z0-9_]*|\\*)?$"'],
    ['services.pricing.routes.b.methods', 13, 'route "a" serves GET /x/:id already'],
    ['services.pricing.routes.c.path', 14, 'dot segments (. and ..) are not allowed in a route path'],
  ])
})

t.test('a block under an unknown name without type is one problem, not a list of missing keys', async (t) => {
  const text = `issuer: { issuer: https://auth.test }
scopes: {}
services:
  pricing:
    prefix: /legacy/pricing
    envelope: exchange
`
  t.same(await problemsOf(text), [['services.pricing', 4, 'unknown service: not a fixed service\'s name, and no `type` (e.g. `type: proxy`) selects a service type']])
})

t.test('circuit_breaker: defaults filled in and handed to the engine; a breaker without a rule or with max_open below open is refused with its path', async (t) => {
  const { config } = await parseGatewayConfig(file('      targets: [ "http://a.test" ]\n      circuit_breaker: { consecutive_failures: 5 }'), 'gateway.yaml', { env: {} })
  t.same(proxyUpstreamSettings(proxySettings(config.services.pricing!).upstream!).circuit_breaker, {
    failure_statuses: [500, 502, 503, 504],
    consecutive_failures: 5,
    open_seconds: 30,
    max_open_seconds: 300,
    half_open_requests: 1,
  })
  const rate = await parseGatewayConfig(file('      targets: [ "http://a.test" ]\n      circuit_breaker: { failure_rate: { percent: 50 }, slow: { ms: 2000, percent: 80 } }'), 'gateway.yaml', { env: {} })
  t.same(proxySettings(rate.config.services.pricing!).upstream!.circuit_breaker, {
    failure_statuses: [500, 502, 503, 504],
    failure_rate: { percent: 50, window_seconds: 30, min_requests: 20 },
    slow: { ms: 2000, percent: 80, window_seconds: 30, min_requests: 20 },
    open_seconds: 30,
    max_open_seconds: 300,
    half_open_requests: 1,
  })
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]\n      circuit_breaker: { open_seconds: 60, max_open_seconds: 30 }')), [
    ['services.pricing.upstream.circuit_breaker', 10, 'needs a rule that opens it: consecutive_failures, failure_rate or slow'],
    ['services.pricing.upstream.circuit_breaker.max_open_seconds', 10, 'must be at least open_seconds (60)'],
  ])
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]\n      circuit_breaker: { consecutive_failures: 0, failure_statuses: [700], failure_rate: { percent: 50, window: 3 } }')), [
    ['services.pricing.upstream.circuit_breaker.failure_statuses[0]', 10, 'must be <= 599'],
    ['services.pricing.upstream.circuit_breaker.consecutive_failures', 10, 'must be >= 1'],
    ['services.pricing.upstream.circuit_breaker.failure_rate.window', 10, 'unknown key "window"'],
  ])
})

t.test('retry.budget: defaults filled in and handed to the engine; a percent over 100 is refused with its path', async (t) => {
  const { config } = await parseGatewayConfig(file('      targets: [ "http://a.test" ]\n      retry: { attempts: 3, budget: {} }'), 'gateway.yaml', { env: {} })
  t.same(proxyUpstreamSettings(proxySettings(config.services.pricing!).upstream!).retry, { attempts: 3, methods: ['GET', 'HEAD', 'OPTIONS'], budget: { percent: 20, min_per_second: 1 } })
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]\n      retry: { budget: { percent: 101 } }')), [
    ['services.pricing.upstream.retry.budget.percent', 10, 'must be <= 100'],
  ])
})

t.test('outlier_ejection: defaults filled in and handed to the engine; refused on a single target', async (t) => {
  const { config } = await parseGatewayConfig(file('      targets: [ "http://a.test", "http://b.test" ]\n      outlier_ejection: {}'), 'gateway.yaml', { env: {} })
  t.same(proxyUpstreamSettings(proxySettings(config.services.pricing!).upstream!).outlier_ejection, {
    interval_seconds: 10, min_requests: 20, above_siblings_percent: 50, failure_statuses: [500, 502, 503, 504], eject_seconds: 30, max_ejected_percent: 50,
  })
  t.same(await problemsOf(file('      targets: [ "http://a.test", "http://b.test" ]\n      outlier_ejection: { max_ejected_percent: 0 }')), [
    ['services.pricing.upstream.outlier_ejection.max_ejected_percent', 10, 'must be >= 1'],
  ])
  t.same(await problemsOf(file('      targets: [ "http://a.test" ]\n      outlier_ejection: {}')), [
    ['services.pricing.upstream.outlier_ejection', 10, 'compares a target with its siblings: needs two targets or more'],
  ])
})
