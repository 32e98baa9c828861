import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import { loadGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { explainRequest } from '../../src/describe/explain.js'
import { createLogger } from '../../src/logging/logger.js'
import { catalog as builtIn, type Catalog } from '../../src/pipeline/registry.js'
import { definePolicy, Type, type GatewaySettings } from '../../src/plugin/index.js'
import { bootGateway } from '../../src/start/boot.js'
import { GatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'

// The view of gateway.yaml a policy reads (lanegate/plugin's GatewaySettings), here of the shipped demo file.

const { config } = await loadGatewayConfig(repoPath('gateway.yaml'), { env: {} })
const settings = gatewaySettings(config)

t.test('the settings a policy reads are the demo file\'s', async (t) => {
  t.same({
    issuer: settings.issuer,
    scopes: [...settings.scopes],
    organizations: [...settings.organizations],
    rateLimits: settings.rateLimits,
    cacheStoreMaxBytes: settings.cacheStoreMaxBytes,
    clientCertificates: settings.clientCertificates,
  }, {
    issuer: 'http://localhost:8080',
    scopes: [
      'commerce:payment-intents.read', 'commerce:payment-intents.create', 'commerce:connected-accounts.read',
      'engage:content.view', 'engage:circulars.view', 'engage:content.create',
      'exchange:live.read', 'exchange:live.write', 'exchange:timeseries.read', 'exchange:reports.run',
      'exchange:fanout.preview', 'exchange:fanout.commit', 'exchange:hostfile.author', 'pricing:read', 'pricing:write',
    ],
    organizations: ['org_hq_demo', 'org_other_hq'],
    rateLimits: {
      'payments-per-ip': { key: 'ip', points: 100, window_seconds: 60 },
      'content-per-client': { key: 'client', points: 600, window_seconds: 60 },
      'exchange-per-client': { key: 'client', points: 600, window_seconds: 60 },
    },
    cacheStoreMaxBytes: 67_108_864,
    clientCertificates: false,
  })
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

t.test('requires, check, create and explain of a loaded config get one settings object, its issuer filled', async (t) => {
  const seen: Array<{ by: string, settings: GatewaySettings, issuer: string }> = []
  const note = (by: string, settings: GatewaySettings): void => { seen.push({ by, settings, issuer: settings.issuer }) }
  const recorder = definePolicy({
    name: 'record-settings',
    description: 'Records the settings each part of the contract is given.',
    schema: Type.Object({}, { additionalProperties: false }),
    // Typed optional in the contract; the loader always passes it (a missing one leaves `requires` out of `seen`).
    requires (_options, settings) { if (settings !== undefined) note('requires', settings); return [] },
    check (_options, settings) { note('check', settings); return [] },
    explain (_options, request) { note('explain', request.settings); return { outcome: 'pass', note: 'recorded' } },
    create (_options, context) {
      note('create', context.settings)
      return function recordedStep () { return undefined }
    },
  })
  const catalog: Catalog = { ...builtIn, plugins: new Map([...builtIn.plugins, ['record-settings', recorder]]) }
  // No issuer.issuer: the default one (on `adjust`'s port) is what check already reads.
  const text = GatewayFixture.load().delete('issuer.issuer').append('services.content.routes.content_list', { 'record-settings': {} }).text()
  const dataDir = await mkdtemp(join(tmpdir(), 'lanegate-settings-'))
  const booted = await bootGateway({
    text, catalog, env: {}, logger: createLogger('silent'),
    adjust: (loaded) => { loaded.config.server.data_dir = dataDir; loaded.config.server.port = 9000 },
  })
  t.teardown(async () => {
    await booted.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  const explained = explainRequest(booted.gateway.current().config, catalog, 'GET', '/public/v1/content', { kind: 'client', clientId: 'demo-content' })
  t.same(explained.result, { outcome: 'depends' }, 'the chain reached the recorder')
  const first = seen[0]?.settings
  t.same(seen.map(({ by, issuer }) => ({ by, issuer })), ['requires', 'check', 'create', 'explain'].map((by) => ({ by, issuer: 'http://localhost:9000' })))
  t.ok(seen.every((s) => s.settings === first), 'one object')
  t.equal(gatewaySettings(booted.gateway.current().config), first, 'and the one gatewaySettings answers')
})
