import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import { loadGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { repoPath } from '../helpers/paths.js'

// The view of gateway.yaml a policy reads (lanegate/plugin's GatewaySettings), here of the shipped demo file.

const { config } = await loadGatewayConfig(repoPath('gateway.yaml'))
const settings = gatewaySettings(config)

t.test('the settings a policy reads are the config\'s', async (t) => {
  t.equal(settings.issuer, config.issuer.issuer)
  t.same([...settings.scopes].sort(), Object.keys(config.scopes).sort())
  t.same([...settings.organizations], ['org_hq_demo', 'org_other_hq'])
  t.same(settings.rateLimits, {
    'payments-per-ip': { key: 'ip', points: 100, window_seconds: 60 },
    'content-per-client': { key: 'client', points: 600, window_seconds: 60 },
    'exchange-per-client': { key: 'client', points: 600, window_seconds: 60 },
  })
  t.equal(settings.cacheStoreMaxBytes, config.cache_store.max_bytes)
  t.equal(settings.clientCertificates, false, 'no server.tls.client_ca_file')
})

t.test('account status, the store-access rule and relayed services are answered from the config', async (t) => {
  t.same(['demo-checkout', 'demo-revoked', 'nobody'].map((id) => settings.accountStatus(id)), ['active', 'revoked', undefined])
  t.same([
    settings.reach('org_hq_demo', 'org_store_001'),
    settings.reach('org_hq_demo', 'org_hq_demo'),
    settings.reach('org_other_hq', 'org_store_900'),
    settings.reach('org_hq_demo', 'org_store_900'),
    settings.reach('org_hq_demo', 'org_nowhere'),
  ], ['served', 'reachable', 'served', 'outside', 'outside'])
  t.same(['live', 'pricing', 'payments', 'content', 'nowhere'].map((service) => settings.relays(service)), [true, true, false, false, false])
})

t.test('one view per validated config, read-only', async (t) => {
  t.equal(gatewaySettings(config), settings, 'every policy of a snapshot sees the same object (the cache keys its store by it)')
  t.ok(Object.isFrozen(settings))
})
