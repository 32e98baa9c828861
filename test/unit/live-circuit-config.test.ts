import t from 'tap'
import { ConfigError } from '../../src/config/config-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { declaredLanes } from '../../src/upstream/declared-lanes.js'
import { laneUpstreamSettings } from '../../src/upstream/registry.js'

/** `services.live.circuit_breaker` through the real loader: validated with its path, handed to every lane. */
const file = (breaker: string): string => `issuer: { issuer: https://auth.test }
scopes: {}
organizations:
  - id: org_hq
    stores:
      - { id: org_store_1, lane: { base_url: "http://127.0.0.1:9101" } }
      - { id: org_store_2, lane: { base_url: "http://127.0.0.1:9102" } }
services:
  live:
    prefix: /v1/stores
    envelope: exchange
${breaker}
`

t.test('every declared lane carries the breaker; without one each store\'s own lane object is declared', async (t) => {
  const { config } = await parseGatewayConfig(file('    circuit_breaker: { failure_rate: { percent: 50 } }'), 'gateway.yaml', { env: {} })
  const lanes = declaredLanes(config)
  const expected = { failure_statuses: [500, 502, 503, 504], failure_rate: { percent: 50, window_seconds: 30, min_requests: 20 }, open_seconds: 30, max_open_seconds: 300, half_open_requests: 1 }
  t.same([...lanes.values()].map((lane) => laneUpstreamSettings(lane).circuit_breaker), [expected, expected])
  t.equal(declaredLanes(config).get('org_store_1'), lanes.get('org_store_1'), 'the same copy for every reconcile of one snapshot')
  const plain = await parseGatewayConfig(file(''), 'gateway.yaml', { env: {} })
  t.equal(declaredLanes(plain.config).get('org_store_1'), plain.config.organizations[0]?.stores[0]?.lane)
  t.equal(laneUpstreamSettings(declaredLanes(plain.config).get('org_store_1')!).circuit_breaker, undefined)
})

t.test('a live breaker without a rule, or with max_open_seconds below open_seconds, is refused with its path', async (t) => {
  const error = await parseGatewayConfig(file('    circuit_breaker: { open_seconds: 60, max_open_seconds: 10 }'), 'gateway.yaml', { env: {} }).then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof ConfigError)
  t.same((error as ConfigError).problems.map((p) => [p.path, p.message]), [
    ['services.live.circuit_breaker', 'needs a rule that opens it: consecutive_failures, failure_rate or slow'],
    ['services.live.circuit_breaker.max_open_seconds', 'must be at least open_seconds (60)'],
  ])
})
