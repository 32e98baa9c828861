import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { buildIndexes } from '../../src/config/indexes.js'
import type { GatewayConfig, OrganizationConfig, ServiceConfig } from '../../src/config/types.js'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import type { Principal } from '../../src/runtime/request-context.js'
import type { SharedResources } from '../../src/runtime/shared-resources.js'
import { createSharedUpstreams, type SharedUpstreams } from '../../src/upstream/registry.js'
import { declaredLanes } from '../../src/upstream/declared-lanes.js'
import type { ServiceModule } from '../../src/services/service-module.js'
import type { Store } from '../../src/store/store.js'
import { mountServiceRoutes } from '../../src/services/mount-service.js'
import { serviceRoutes as declaredRoutesOf } from '../../src/services/service-module.js'
import { baseTestConfig, loadTestConfig } from './base-config.js'

/**
 * A bare fastify app serving ONE service module the way the gateway does (routes under the prefix, `request.gw`
 * set per request, errors rendered by the gateway's handler in the service's envelope), without the policy
 * chain: the caller's organization comes from the `x-test-organization` header (absent → 401), so these tests
 * exercise the service itself. The whole gateway (auth → token-type → scope) is tested in test/app via app.ts.
 */
export interface ServiceAppOptions {
  organizations: OrganizationConfig[]
  /** The service's YAML block (prefix, envelope, settings). */
  service: ServiceConfig
  store?: Store
}

export const TEST_ORG_HEADER = 'x-test-organization'

export function testConfig (name: string, options: ServiceAppOptions): GatewayConfig {
  return baseTestConfig({ organizations: options.organizations, services: { [name]: options.service } })
}

/** Builds the app; returns it with the built service's close function run on app close. */
export async function buildServiceApp (module: ServiceModule, options: ServiceAppOptions): Promise<FastifyInstance> {
  return (await buildReloadableServiceApp(module, options)).app
}

/**
 * `buildServiceApp`, with `reload(organizations)`: swaps in a config with other organizations as a gateway reload
 * does (the snapshot and `currentConfig` change, and the lanes are declared again: a removed store's lane retires).
 */
export async function buildReloadableServiceApp (module: ServiceModule, options: ServiceAppOptions): Promise<{
  app: FastifyInstance
  upstreams: SharedUpstreams
  reload: (organizations: OrganizationConfig[]) => Promise<void>
}> {
  let config = await loadTestConfig(testConfig(module.name, options), [module])
  let snapshot: Snapshot = { version: 1, config, indexes: buildIndexes(config), chains: new Map() }
  const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger
  const upstreams = createSharedUpstreams()
  // As the gateway does with each snapshot (src/reload/live-config.ts): the lanes follow the config.
  upstreams.lanes.reconcile(declaredLanes(config))
  const shared = { logger, upstreams, store: options.store ?? { close: async () => {} } } as unknown as SharedResources
  const built = module.build({ service: module.name, shared, currentConfig: () => config })

  const app = Fastify({ logger: false })
  app.setErrorHandler(createErrorHandler('plain'))
  app.decorateRequest('gw', null as never)
  await app.register(async function serviceRoutes (scope) {
    mountServiceRoutes(scope, {
      service: module.name,
      envelope: options.service.envelope,
      routes: declaredRoutesOf(module, built, options.service),
      snapshot: () => snapshot,
      contextHook: (route) => async function testContext (request) {
        request.gw = { snapshot, service: module.name, routeId: route.id, envelope: options.service.envelope }
        const org = request.headers[TEST_ORG_HEADER]
        if (typeof org !== 'string') throw new GatewayError('unauthenticated')
        request.gw.principal = testPrincipal(org)
      },
    })
  }, { prefix: options.service.prefix })
  app.addHook('onClose', async () => {
    await built.close?.()
    await upstreams.close()
  })
  const reload = async (organizations: OrganizationConfig[]): Promise<void> => {
    const next = await loadTestConfig(testConfig(module.name, { ...options, organizations }), [module])
    upstreams.lanes.reconcile(declaredLanes(next))
    config = next
    snapshot = { version: snapshot.version + 1, config, indexes: buildIndexes(config), chains: new Map() }
  }
  return { app, upstreams, reload }
}

export function testPrincipal (organizationId: string): Principal {
  return {
    tokenType: 'service',
    subject: `svc-${organizationId}`,
    clientId: `svc-${organizationId}`,
    organizationId,
    scopes: new Set(),
    tokenId: 'test',
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
    issuer: 'https://auth.test',
  }
}
