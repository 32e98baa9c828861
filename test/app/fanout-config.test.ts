import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { ConfigError } from '../../src/config/config-error.js'
import { fanoutService } from '../../src/services/fanout/index.js'
import { hostfileService } from '../../src/services/hostfile/index.js'

const catalog = { plugins: new Map(), services: [fanoutService, hostfileService], outside: new Map() }

function yaml (payloadSchema: string): string {
  return `
issuer: { issuer: https://auth.example }
scopes: {}
services:
  hostfile: { prefix: /v1/hostfile, envelope: exchange, routes: { author: [] } }
  fanout:
    prefix: /v1/fanout
    envelope: exchange
    routes: { preview: [], commit: [], get: [] }
    operations:
      price-change:
        payload_schema: ${payloadSchema}
        preview_path: /fanout/price-change/preview
        apply_path: /fanout/price-change/apply
`
}

t.test('settings validate and get their documented defaults', async (t) => {
  const { config } = await parseGatewayConfig(yaml('{ type: object }'), 'gateway.yaml', { env: {} }, catalog)
  const { prefix, envelope, routes, policies, operations, ...fanout } = config.services.fanout as Record<string, unknown>
  t.same(fanout, {
    max_stores: 50,
    max_payload_bytes: 65536,
    retry: { attempts: 5, base_delay_ms: 1000, max_delay_ms: 30000 },
    lane_timeout_ms: 10000,
    concurrency: 8,
    commit_wait_ms: 10000,
    recovery: { lease_ms: 30000, sweep_interval_ms: 5000 },
  })
  t.same(operations, { 'price-change': { payload_schema: { type: 'object' }, preview_path: '/fanout/price-change/preview', apply_path: '/fanout/price-change/apply', description: '' } })
  t.equal((config.services.hostfile as Record<string, unknown>).max_records, 10000)
})

t.test('an invalid payload_schema is a config error naming its path and line', async (t) => {
  try {
    await parseGatewayConfig(yaml('{ type: object, properties: { a: { type: nope } } }'), 'gateway.yaml', { env: {} }, catalog)
    t.fail('expected a ConfigError')
  } catch (error) {
    t.ok(error instanceof ConfigError)
    const problems = (error as ConfigError).problems
    t.equal(problems.length, 1)
    t.equal(problems[0]?.path, 'services.fanout.operations.price-change.payload_schema')
    t.equal(problems[0]?.line, 12)
    t.match(problems[0]?.message, /^not a valid JSON Schema: /)
  }
})
