import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { buildIndexes } from '../../src/config/indexes.js'
import type { GatewayConfig } from '../../src/config/types.js'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import type { Principal } from '../../src/runtime/request-context.js'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import { mountServiceRoutes } from '../../src/services/mount-service.js'
import { reconcileServices, serviceRoutes, type ServiceModule, type ServiceResources } from '../../src/services/service-module.js'
import { createSqliteStore } from '../../src/store/sqlite/create-sqlite-store.js'
import type { Store } from '../../src/store/store.js'
import { declaredLanes } from '../../src/upstream/declared-lanes.js'
import { createSharedUpstreams, type SharedUpstreams } from '../../src/upstream/registry.js'
import { loadTestConfig } from './base-config.js'

/** The header a bare service app reads the caller's organization from (absent → 401). */
export const TEST_ORG_HEADER = 'x-test-organization'
/** The header a bare service app reads the caller's client id from (absent → `svc-<organization>`). */
export const TEST_CLIENT_HEADER = 'x-test-client'

/** A service token's principal for a caller of `organizationId`. */
export function testPrincipal (organizationId: string, clientId = `svc-${organizationId}`): Principal {
  return {
    tokenType: 'service', subject: clientId, clientId, organizationId, scopes: new Set(), tokenId: 'test',
    expiresAt: Math.floor(Date.now() / 1000) + 3600, issuer: 'https://auth.test',
  }
}

export interface ServiceModulesAppOptions {
  /** The store the services use (payments, fan-out); default a fresh in-memory SQLite store, closed with the app. */
  store?: Store
  /**
   * The gateway's standard response headers: `x-request-id`, and `cache-control: no-store` where the handler set
   * none (the data-exchange tests assert them).
   */
  standardHeaders?: boolean
}

export interface ServiceModulesApp {
  app: FastifyInstance
  upstreams: SharedUpstreams
  /** Swaps in another config as a gateway reload does: a new snapshot, `currentConfig`, and the lanes declared again. */
  setConfig (config: GatewayConfig): Promise<void>
}

/**
 * A bare fastify app serving `modules` the way the gateway does: each under its block's prefix in `config`,
 * `request.gw` set per request, errors rendered by the gateway's handler in the block's envelope, the lanes (and
 * each module's `reconcile`) following the config. The policy chain is left out so that these tests exercise the
 * services themselves: the caller's principal comes from `x-test-organization` and `x-test-client`. The whole
 * gateway (auth → token-type → scope) is tested through `buildTestApp` and `gatewayFixture`.
 */
export async function buildServiceModulesApp (given: GatewayConfig, modules: readonly ServiceModule[], options: ServiceModulesAppOptions = {}): Promise<ServiceModulesApp> {
  let config = await loadTestConfig(given, modules)
  let snapshot: Snapshot = { version: 1, config, indexes: buildIndexes(config), chains: new Map() }
  const app = Fastify({ logger: false })
  const store = options.store ?? createSqliteStore(':memory:')
  const shared: ServiceResources = { logger: app.log, store, upstreams: createSharedUpstreams() }
  const followConfig = (next: GatewayConfig): void => {
    shared.upstreams.lanes.reconcile(declaredLanes(next))
    reconcileServices(modules, next, shared)
  }
  followConfig(config)
  const closeServices: (() => Promise<void>)[] = []
  app.addHook('onClose', async function closeAll () {
    // The services first: a fan-out delivery still running uses the lanes and the store.
    for (const close of closeServices) await close()
    await shared.upstreams.close()
    if (options.store === undefined) await store.close()
  })
  app.setErrorHandler(createErrorHandler('plain'))
  app.decorateRequest('gw', null as never)
  if (options.standardHeaders === true) app.addHook('onSend', standardHeaders)
  for (const module of modules) {
    const settings = config.services[module.name]
    if (settings === undefined) throw new Error(`no services.${module.name} in the test config`)
    const built = module.build({ service: module.name, shared, currentConfig: () => config })
    closeServices.push(async () => { await built.close?.() })
    await app.register(async function serviceScope (scope) {
      mountServiceRoutes(scope, {
        service: module.name,
        envelope: settings.envelope,
        routes: serviceRoutes(module, built, settings),
        snapshot: () => snapshot,
        contextHook: (route) => async function testContext (request) {
          request.gw = { snapshot, service: module.name, routeId: route.id, envelope: settings.envelope }
          request.gw.principal = principalOf(request)
        },
      })
    }, { prefix: settings.prefix })
  }
  return {
    app,
    upstreams: shared.upstreams,
    async setConfig (next) {
      const loaded = await loadTestConfig(next, modules)
      followConfig(loaded)
      config = loaded
      snapshot = { version: snapshot.version + 1, config, indexes: buildIndexes(config), chains: new Map() }
    },
  }
}

function principalOf (request: FastifyRequest): Principal {
  const organization = request.headers[TEST_ORG_HEADER]
  if (typeof organization !== 'string') throw new GatewayError('unauthenticated')
  const client = request.headers[TEST_CLIENT_HEADER]
  return testPrincipal(organization, typeof client === 'string' ? client : undefined)
}

async function standardHeaders (request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('x-request-id', request.id)
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
}
