import t from 'tap'
import { ConfigError } from '../../src/config/config-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { proxySettings } from '../../src/services/proxy/settings.js'
import { bucketRanges, chooseGroup, splitBucket, type SplitSettings } from '../../src/upstream/split.js'

/** `upstreams:` and `split:` of a proxy block through the real loader: defaults, and every mistake with path and line. */
const file = (block: string, route = ''): string => `issuer: { issuer: https://auth.test }
scopes: {}
services:
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
${block}
    routes:
      read: { methods: [GET], path: "/prices/*"${route} }
`

const GROUPS = `    upstreams:
      legacy: { targets: [ "http://a.test" ] }
      next: { targets: [ "http://b.test" ] }
`

async function problemsOf (text: string): Promise<Array<[string, number | undefined, string]>> {
  const error = await parseGatewayConfig(text, 'gateway.yaml', { env: {} }).then(() => undefined, (e: unknown) => e)
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`)
  return error.problems.map((p) => [p.path, p.line, p.message])
}

t.test('a valid split gets its defaults', async (t) => {
  const { config } = await parseGatewayConfig(file(`${GROUPS}    split: { weights: { legacy: 90, next: 10 } }`), 'gateway.yaml', { env: {} })
  const settings = proxySettings(config.services.pricing!)
  t.same(settings.split, { rules: [], weights: { legacy: 90, next: 10 }, sticky: 'client' })
  t.same(Object.keys(settings.upstreams!), ['legacy', 'next'])
  t.equal(settings.upstreams!.next!.balance, 'round_robin', 'each group gets the upstream defaults')
})

t.test('unknown groups, weights adding up to 0, a rule naming nothing, a split without choice are refused with paths', async (t) => {
  t.same(await problemsOf(file(`${GROUPS}    split:
      rules: [ { match: {}, upstream: nxt } ]
      weights: { legacy: 0, nexy: 0 }
      fallback: old`)), [
    ['services.pricing.split.rules[0].match', 12, 'names nothing to match: give header, clients, organizations or stores'],
    ['services.pricing.split.rules[0].upstream', 12, 'no upstream group "nxt" (groups: legacy, next)'],
    ['services.pricing.split.weights.nexy', 13, 'no upstream group "nexy" (groups: legacy, next)'],
    ['services.pricing.split.weights', 13, 'the weights must add up to more than 0'],
    ['services.pricing.split.fallback', 14, 'no upstream group "old" (groups: legacy, next)'],
  ])
  t.same(await problemsOf(file(`${GROUPS}    split: { sticky: store }`)), [['services.pricing.split', 11, 'chooses nothing: give rules or weights']])
  t.same(await problemsOf(file(GROUPS, ', split: { weights: { legacy: 1, beta: 1 } }')), [
    ['services.pricing.routes.read.split.weights.beta', 13, 'no upstream group "beta" (groups: legacy, next)'],
  ])
})

t.test('upstream and upstreams: exactly one; a split needs upstreams; a group\'s own mistakes carry its path', async (t) => {
  t.same(await problemsOf(file('    policies: []')), [['services.pricing.upstream', 5, 'is required: give upstream (one group of targets) or upstreams (named groups)']])
  t.same(await problemsOf(file(`${GROUPS}    upstream: { targets: [ "http://c.test" ] }`)), [['services.pricing.upstreams', 8, 'give upstream or upstreams, not both']])
  t.same(await problemsOf(file('    upstream: { targets: [ "http://c.test" ] }\n    split: { weights: { a: 1 } }')), [
    ['services.pricing.split', 9, 'chooses between target groups: give the block upstreams (named groups) instead of upstream'],
  ])
  t.same(await problemsOf(file(`    upstreams:
      legacy: { targets: [ "http://a.test", "http://a.test:80" ], outlier_ejection: {} }
      Next: { targets: [ "http://b.test" ] }`)), [
    ['services.pricing.upstreams.Next', 10, 'must match pattern "^[a-z][a-z0-9_-]{0,31}$"'],
    ['services.pricing.upstreams.legacy.targets[1]', 9, 'duplicate target (same as upstreams.legacy.targets[0])'],
  ])
  t.same(await problemsOf(file('    upstreams: {}')), [['services.pricing.upstreams', 8, 'names no group: give at least one']])
  t.same(await problemsOf(file(`    upstreams:
      legacy: { targets: [ "http://a.test", "http://a.test:80" ], circuit_breaker: {} }`)), [
    ['services.pricing.upstreams.legacy.targets[1]', 9, 'duplicate target (same as upstreams.legacy.targets[0])'],
    ['services.pricing.upstreams.legacy.circuit_breaker', 9, 'needs a rule that opens it: consecutive_failures, failure_rate or slow'],
  ])
})

t.test('the weights lie on 10,000 buckets in the order listed; moving weight moves only the border', async (t) => {
  t.same(bucketRanges({ legacy: 90, next: 10 }), [{ group: 'legacy', end: 9000 }, { group: 'next', end: 10000 }])
  t.same(bucketRanges({ legacy: 80, next: 20 }), [{ group: 'legacy', end: 8000 }, { group: 'next', end: 10000 }])
  t.same(bucketRanges({ a: 1, off: 0, b: 2 }), [{ group: 'a', end: 3333 }, { group: 'off', end: 3333 }, { group: 'b', end: 10000 }])
  // Pinned: another hash would move callers between groups at the upgrade, and differ between old and new instances.
  t.same([splitBucket('pricing', 'till-1'), splitBucket('live', 'org_store_001'), splitBucket('pricing', '')], [9849, 5779, 5585], 'stable')
  t.not(splitBucket('pricing', 'till-1'), splitBucket('inventory', 'till-1'), 'per service')
  const split: SplitSettings = { rules: [], weights: { legacy: 1, off: 0, next: 1 }, sticky: 'organization' }
  const caller = { clientId: 'c', header: () => undefined }
  t.same(chooseGroup(split, 'pricing', caller, 'legacy'), { group: 'legacy', reason: 'fallback', why: 'no_sticky_key' }, 'no organization: the first group of weights')
  t.same(chooseGroup({ ...split, fallback: 'next' }, 'pricing', caller, 'legacy'), { group: 'next', reason: 'fallback', why: 'no_sticky_key' })
  let off = 0
  for (let i = 0; i < 2000; i++) if (chooseGroup(split, 'pricing', { ...caller, organizationId: `org_${i}` }, 'legacy').group === 'off') off++
  t.equal(off, 0, 'a group of weight 0 gets nobody')
})

t.test('mirror: defaults; a group that does not exist, or a block without upstreams, refused with paths', async (t) => {
  const { config } = await parseGatewayConfig(file(`${GROUPS}    mirror: { upstream: next, percent: 5 }`), 'gateway.yaml', { env: {} })
  t.same(proxySettings(config.services.pricing!).mirror, { upstream: 'next', percent: 5, max_body_bytes: 65536, max_in_flight: 16 })
  t.same(await problemsOf(file(`${GROUPS}    mirror: { upstream: shadow, percent: 101 }`)), [
    ['services.pricing.mirror.percent', 11, 'must be <= 100'],
    ['services.pricing.mirror.upstream', 11, 'no upstream group "shadow" (groups: legacy, next)'],
  ])
  t.same(await problemsOf(file('    upstream: { targets: [ "http://c.test" ] }', ', mirror: { upstream: next, percent: 1 }')), [
    ['services.pricing.routes.read.mirror', 10, 'copies to another target group: give the block upstreams (named groups) instead of upstream'],
  ])
})
