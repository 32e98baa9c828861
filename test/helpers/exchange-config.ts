import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { liveService } from '../../src/services/live/index.js'
import { reportsService } from '../../src/services/reports/index.js'
import { timeseriesService } from '../../src/services/timeseries/index.js'
import { startCsSimulator, type CsSimulator } from '../simulators/cs-simulator.js'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'
import { buildIndexes } from '../../src/config/indexes.js'
import type { GatewayConfig, LaneConfig, OrganizationConfig, ServiceConfig } from '../../src/config/types.js'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import type { Principal } from '../../src/runtime/request-context.js'
import type { SharedResources } from '../../src/runtime/shared-resources.js'
import { createSharedUpstreams } from '../../src/upstream/registry.js'
import { declaredLanes } from '../../src/upstream/declared-lanes.js'
import type { ServiceModule } from '../../src/services/service-module.js'
import { baseTestConfig, loadTestConfig } from './base-config.js'
import { mountServiceRoutes } from '../../src/services/mount-service.js'
import { serviceRoutes as declaredRoutesOf } from '../../src/services/service-module.js'

/**
 * The organizations the data-exchange tests use:
 * - `org_hq` (HQ) owns `org_store_a` and `org_store_b` (lanes), `org_store_idle` (install inactive) and
 *   `org_store_nolane` (installed, no lane); child org `org_region` owns `org_store_c`;
 * - `org_other` owns `org_store_x` (a lane the HQ must never reach).
 */
export const HQ = 'org_hq'
export const OTHER = 'org_other'

export interface ExchangeLanes {
  a?: string
  b?: string
  c?: string
  x?: string
}

export function lane (baseUrl: string, overrides: Partial<LaneConfig> = {}): LaneConfig {
  return { base_url: baseUrl, credential: 'Lane lane-secret-a', connect_timeout_ms: 1000, response_timeout_ms: 1500, max_sockets: 4, ...overrides }
}

export function exchangeOrganizations (lanes: ExchangeLanes = {}, laneOverrides: Partial<LaneConfig> = {}): OrganizationConfig[] {
  const maybe = (url?: string): { lane?: LaneConfig } => url === undefined ? {} : { lane: lane(url, laneOverrides) }
  return [
    {
      id: HQ,
      name: 'HQ',
      stores: [
        { id: 'org_store_a', name: 'Store A', install_active: true, ...maybe(lanes.a) },
        { id: 'org_store_b', name: 'Store B', install_active: true, ...maybe(lanes.b) },
        { id: 'org_store_idle', name: 'Idle', install_active: false, ...maybe(lanes.a) },
        { id: 'org_store_nolane', name: 'No lane', install_active: true },
      ],
    },
    { id: 'org_region', name: 'Region', parent: HQ, stores: [{ id: 'org_store_c', name: 'Store C', install_active: true, ...maybe(lanes.c) }] },
    { id: OTHER, name: 'Other', stores: [{ id: 'org_store_x', name: 'Store X', install_active: true, ...maybe(lanes.x) }] },
  ]
}

/** A whole GatewayConfig with the given organizations and service blocks (the rest as the schema defaults). */
export function exchangeConfig (organizations: OrganizationConfig[], services: Record<string, ServiceConfig>): GatewayConfig {
  return baseTestConfig({ organizations, services })
}

export function service (prefix: string, settings: Record<string, unknown> = {}): ServiceConfig {
  return { prefix, envelope: 'exchange', policies: [], routes: {}, ...settings }
}

/** The header a bare exchange app reads the caller's organization from (absent → 401). */
export const ORG_HEADER = 'x-test-organization'

export function principalFor (organizationId: string): Principal {
  return {
    tokenType: 'service', subject: `svc-${organizationId}`, clientId: `svc-${organizationId}`, organizationId,
    scopes: new Set(), tokenId: 'test', expiresAt: Math.floor(Date.now() / 1000) + 3600, issuer: 'https://auth.test',
  }
}

/**
 * A bare fastify app serving the given data-exchange modules as the gateway does (each under its prefix,
 * `request.gw` set per request, errors rendered by the gateway's handler in the exchange envelope, raw-body routes
 * in a scope without body parsers), with the policy chain replaced by one step: the principal comes from
 * `x-test-organization`, and the organization policy's store check is left to the handlers' own re-check.
 */
export async function buildExchangeApp (given: GatewayConfig, modules: ServiceModule[]): Promise<FastifyInstance> {
  const config = await loadTestConfig(given, modules)
  const snapshot: Snapshot = { version: 1, config, indexes: buildIndexes(config), chains: new Map() }
  const upstreams = createSharedUpstreams()
  // As the gateway does with each snapshot: the stores' lanes (with the live proxy's circuit breaker) are declared.
  upstreams.lanes.reconcile(declaredLanes(config))
  const shared = { upstreams } as unknown as SharedResources
  const app = Fastify({ logger: false, requestIdHeader: false })
  app.addHook('onClose', async () => { await upstreams.close() })
  app.setErrorHandler(createErrorHandler('plain'))
  app.decorateRequest('gw', null as never)
  app.addHook('onSend', async function standardHeaders (request, reply) {
    reply.header('x-request-id', request.id)
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
  })
  for (const module of modules) {
    const settings = config.services[module.name]
    if (settings === undefined) throw new Error(`no services.${module.name} in the test config`)
    const built = module.build({ service: module.name, shared, currentConfig: () => config })
    app.addHook('onClose', async () => { await built.close?.() })
    await app.register(async function serviceScope (scope) {
      mountServiceRoutes(scope, {
        service: module.name,
        envelope: settings.envelope,
        routes: declaredRoutesOf(module, built, settings),
        snapshot: () => snapshot,
        contextHook: (route) => async function testContext (request) {
          request.gw = { snapshot, service: module.name, routeId: route.id, envelope: settings.envelope }
          const org = request.headers[ORG_HEADER]
          if (typeof org !== 'string') throw new GatewayError('unauthenticated')
          request.gw.principal = principalFor(org)
        },
      })
    }, { prefix: settings.prefix })
  }
  return app
}

export interface LiveSetup {
  base: string
  laneA: LaneSimulator
  laneB: LaneSimulator
  laneX: LaneSimulator
  /** Headers of an HQ caller. */
  hq: Record<string, string>
}

/**
 * Three lane simulators (store A under the base path `/stores/A`, store B, the other org's store X) and the live
 * proxy in a bare exchange app, all listening on port 0; closed on teardown.
 */
export async function liveSetup (t: Test, options: { lane?: Partial<LaneConfig>, live?: Record<string, unknown> } = {}): Promise<LiveSetup> {
  const laneA = await startLaneSimulator({ name: 'a' })
  const laneB = await startLaneSimulator({ name: 'b' })
  const laneX = await startLaneSimulator({ name: 'x' })
  const config = exchangeConfig(
    exchangeOrganizations({ a: `${laneA.url}/stores/A`, b: laneB.url, x: laneX.url }, options.lane),
    { live: service('/v1/stores', options.live) },
  )
  const app = await buildExchangeApp(config, [liveService])
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    await Promise.all([laneA.close(), laneB.close(), laneX.close()])
  })
  const address = app.server.address() as { port: number }
  return { base: `http://127.0.0.1:${address.port}`, laneA, laneB, laneX, hq: { [ORG_HEADER]: HQ } }
}

export interface CsSetup {
  app: FastifyInstance
  cs: CsSimulator
  hq: Record<string, string>
}

/** The timeseries and reports services in a bare exchange app, over a CS simulator on a real socket. */
export async function csSetup (t: Test, settings: { timeseries?: Record<string, unknown>, reports?: Record<string, unknown> } = {}): Promise<CsSetup> {
  const cs = await startCsSimulator()
  const config = exchangeConfig(exchangeOrganizations(), {
    timeseries: service('/v1/hq', { base_url: cs.url, timeout_ms: 500, ...settings.timeseries }),
    reports: service('/v1/reports', settings.reports),
  })
  const app = await buildExchangeApp(config, [timeseriesService, reportsService])
  t.teardown(async () => {
    await app.close()
    await cs.close()
  })
  return { app, cs, hq: { [ORG_HEADER]: HQ } }
}
