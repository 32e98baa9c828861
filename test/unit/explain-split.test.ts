import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { explainRequest, formatExplanation } from '../../src/describe/explain.js'
import { splitBucket } from '../../src/upstream/split.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'
import { splitGateway } from '../helpers/split-gateway.js'

/** `lanegate explain` says which target group a proxied (or live) request would go to, and why. */

t.test('explain names the group and the reason: a weight bucket, a header rule, a route\'s store rule', async (t) => {
  const split = await splitGateway(t)
  const { config, catalog } = await parseGatewayConfig(split.fixture.text(), 'gateway.yaml', { env: {} })
  const user = (subject: string) => ({ kind: 'user' as const, subject, organizationId: 'org_hq', scopes: ['pricing:read'] })
  const bucket = splitBucket('pricing', 'till-7')
  const group = bucket < 9000 ? 'legacy' : 'next'

  const weighted = explainRequest(config, catalog, 'GET', '/legacy/pricing/prices/1', user('till-7'))
  t.same(weighted.upstream, { group, upstream: `pricing/${group}`, reason: `services.pricing.split: weights: client bucket ${bucket} of 10000` })
  t.match(formatExplanation(weighted), `\nupstream: pricing/${group} (group ${group}: services.pricing.split: weights: client bucket ${bucket} of 10000)`)

  const header = explainRequest(config, catalog, 'GET', '/legacy/pricing/prices/1', user('till-7'), { 'x-pricing-next': '1' })
  t.same(header.upstream, { group: 'next', upstream: 'pricing/next', reason: 'services.pricing.split: rules[0] matched' })

  const store = explainRequest(config, catalog, 'GET', '/legacy/pricing/stores/org_store_2/prices', user('till-7'))
  t.same(store.upstream, { group: 'next', upstream: 'pricing/next', reason: 'services.pricing.routes.store_prices.split: rules[0] matched' })
  const other = explainRequest(config, catalog, 'GET', '/legacy/pricing/stores/org_store_1/prices', user('till-7'), { 'x-pricing-next': '1' })
  t.same(other.upstream, { group: 'legacy', upstream: 'pricing/legacy', reason: 'services.pricing.routes.store_prices.split: weights: client bucket ' + String(bucket) + ' of 10000' })

  const mirrored = await parseGatewayConfig(split.fixture.set('services.pricing.mirror', { upstream: 'next', percent: 5 }).text(), 'gateway.yaml', { env: {} })
  const copy = explainRequest(mirrored.config, mirrored.catalog, 'GET', '/legacy/pricing/stores/org_store_1/prices', user('till-7'))
  t.same(copy.upstream, { group: 'legacy', upstream: 'pricing/legacy', reason: other.upstream!.reason, mirror: { upstream: 'pricing/next', percent: 5 } })
  t.match(formatExplanation(copy), '\nmirror: a copy of 5 % of these requests to pricing/next, its answer discarded')
  const toNext = explainRequest(mirrored.config, mirrored.catalog, 'GET', '/legacy/pricing/stores/org_store_2/prices', user('till-7'))
  t.equal(toNext.upstream?.mirror, undefined, 'a request sent to the mirror group is not copied')

  const refused = explainRequest(config, catalog, 'GET', '/legacy/pricing/prices/1', { kind: 'none' })
  t.equal(refused.upstream, undefined, 'a refused request goes nowhere')
})

t.test('the CLI takes --header, and a single upstream or the live proxy are explained too', async (t) => {
  const fixture = gatewayFixture().set(['organizations', 0, 'stores', 1, 'lane', 'next'], { base_url: 'http://127.0.0.1:9' })
    .set('services.live.split', { rules: [{ match: { stores: ['org_store_002'] }, upstream: 'next' }] })
  const file = await fixture.write()
  t.teardown(() => file.remove())
  const explain = async (...args: string[]) => {
    const res = await runNode(repoPath('bin/lanegate.js'), ['explain', '--config', file.file, '--client', 'demo-exchange', ...args])
    t.equal(res.code, 0, res.stderr)
    return res.stdout.split('\n').filter((line) => line.startsWith('upstream:'))
  }
  t.same(await explain('GET', '/v1/stores/org_store_002/live/items'), ['upstream: org_store_002/next (group next: services.live.split: rules[0] matched)'])
  t.same(await explain('GET', '/v1/stores/org_store_001/live/items'), ['upstream: org_store_001 (group lane: the store\'s lane has no next version)'])
  const pricing = await runNode(repoPath('bin/lanegate.js'), ['explain', '--config', file.file, '--client', 'demo-pricing', '--header', 'X-Anything: 1', 'GET', '/legacy/pricing/prices/1'])
  t.same(pricing.stdout.split('\n').filter((line) => line.startsWith('upstream:')), ['upstream: pricing (group upstream: one group of targets (upstream:))'])
  const bad = await runNode(repoPath('bin/lanegate.js'), ['explain', '--config', file.file, '--client', 'demo-pricing', '--header', 'no-colon', 'GET', '/legacy/pricing/prices/1'])
  t.equal(bad.code, 1)
})
