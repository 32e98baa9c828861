import t from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import type { RawUpstreams } from '../../src/console/process-views.js'
import { shapeView } from '../../src/console/shape-views.js'
import { splitsOf } from '../../src/console/upstream-splits.js'
import { splitGateway } from '../helpers/split-gateway.js'

/** The console's Upstreams view lists each split: its groups (with the upstream rows' names), weights, shares and rules. */

t.test('the block\'s and a route\'s split, with weights, shares and rules', async (t) => {
  const split = await splitGateway(t)
  const { config } = await parseGatewayConfig(split.fixture.text(), 'gateway.yaml', { env: {} })
  const splits = splitsOf(config)
  t.same(splits, [
    {
      service: 'pricing',
      at: 'split',
      sticky: 'client',
      fallback: null,
      rules: [{ upstream: 'next', match: 'header x-pricing-next=1' }],
      groups: [{ group: 'legacy', upstream: 'pricing/legacy', weight: 90, percent: 90 }, { group: 'next', upstream: 'pricing/next', weight: 10, percent: 10 }],
    },
    {
      service: 'pricing',
      at: 'routes.store_prices.split',
      sticky: 'client',
      fallback: null,
      rules: [{ upstream: 'next', match: 'stores org_store_2' }],
      groups: [{ group: 'legacy', upstream: 'pricing/legacy', weight: 1, percent: 100 }, { group: 'next', upstream: 'pricing/next', weight: null, percent: null }],
    },
  ])
  t.equal(splitsOf(config), splits, 'made once per config: the console\'s next poll reads the same views')
  const { config: reloaded } = await parseGatewayConfig(split.fixture.set('services.pricing.split.weights.next', 30).text(), 'gateway.yaml', { env: {} })
  t.not(splitsOf(reloaded), splits, 'a reloaded config gets views of its own')
  const raw: RawUpstreams = { upstreams: [], lastMinute: {}, splits }
  t.same((shapeView('upstreams', [raw, raw], { bounds: [0.1] }) as { splits: unknown }).splits, splits, 'the same in every worker: listed once')
})
