import t from 'tap'
import { configEffect, formatEffect } from '../../src/describe/config-effect.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { processorNeeds } from '../helpers/config-fleet.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'

const file = repoPath('gateway.yaml')
const demo = gatewayFixture().text()
const load = (text: string): ReturnType<typeof parseGatewayConfig> => parseGatewayConfig(text, file)
/** The demo with the processor config route needing the create scope (demo-status has read only). */
const needsCreate = processorNeeds(gatewayFixture(), 'create').text()
const ROUTE = 'GET /api/v1/ecommerce/config/processor (payments/processor_config)'

t.test('the same config has no effect', async (t) => {
  const side = await load(demo)
  t.same(configEffect(side, side), { added: [], removed: [], chainsChanged: [], access: [] })
  t.equal(formatEffect(configEffect(side, side)), '')
})

t.test('a scope change: the chain changed, and the accounts with the old scope only lose access', async (t) => {
  const effect = configEffect(await load(demo), await load(needsCreate))
  t.same(effect.added, [])
  t.same(effect.removed, [])
  t.match(effect.chainsChanged, [{ route: ROUTE, before: /scope: .*commerce:payment-intents\.read/, after: /scope: .*commerce:payment-intents\.create/ }])
  t.same(effect.access, [{ route: ROUTE, gains: [], loses: ['demo-status'] }])
  t.match(formatEffect(effect), new RegExp(`^chains changed:\\n  ~ ${ROUTE.replace(/[()/.]/g, '\\$&')}\\n      before: [^\\n]+\\n      after:  [^\\n]+\\naccess:\\n  ${ROUTE.replace(/[()/.]/g, '\\$&')}\\n      loses: demo-status\\n$`))
  // And back: the same account gains it.
  t.same(configEffect(await load(needsCreate), await load(demo)).access, [{ route: ROUTE, gains: ['demo-status'], loses: [] }])
})

t.test('a route removed: listed, and every account that reached it loses access', async (t) => {
  const without = gatewayFixture().delete('services.payments.routes.connected_account').text()
  t.not(without, demo)
  const effect = configEffect(await load(demo), await load(without))
  const route = 'GET /api/v1/ecommerce/connected-account (payments/connected_account)'
  t.same(effect.removed, [route])
  t.same(effect.access, [{ route, gains: [], loses: ['demo-checkout', 'demo-other'] }])
})
