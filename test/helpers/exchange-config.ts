import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { liveService } from '../../src/services/live/index.js'
import { reportsService } from '../../src/services/reports/index.js'
import { timeseriesService } from '../../src/services/timeseries/index.js'
import { startCsSimulator, type CsSimulator } from '../simulators/cs-simulator.js'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'
import type { GatewayConfig, LaneConfig, OrganizationConfig, ServiceConfig } from '../../src/config/types.js'
import { baseTestConfig } from './base-config.js'
import { buildServiceModulesApp, TEST_ORG_HEADER } from './service-modules-app.js'

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
 * proxy in a bare service app, all listening on port 0; closed on teardown. Without the policy chain the
 * organization policy's store check is left to the handlers' own re-check.
 */
export async function liveSetup (t: Test, options: { lane?: Partial<LaneConfig>, live?: Record<string, unknown> } = {}): Promise<LiveSetup> {
  const laneA = await startLaneSimulator({ name: 'a' })
  const laneB = await startLaneSimulator({ name: 'b' })
  const laneX = await startLaneSimulator({ name: 'x' })
  const config = exchangeConfig(
    exchangeOrganizations({ a: `${laneA.url}/stores/A`, b: laneB.url, x: laneX.url }, options.lane),
    { live: service('/v1/stores', options.live) },
  )
  const { app } = await buildServiceModulesApp(config, [liveService], { standardHeaders: true })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    await Promise.all([laneA.close(), laneB.close(), laneX.close()])
  })
  const address = app.server.address() as { port: number }
  return { base: `http://127.0.0.1:${address.port}`, laneA, laneB, laneX, hq: { [TEST_ORG_HEADER]: HQ } }
}

export interface CsSetup {
  app: FastifyInstance
  cs: CsSimulator
  hq: Record<string, string>
}

/** The timeseries and reports services in a bare service app, over a CS simulator on a real socket. */
export async function csSetup (t: Test, settings: { timeseries?: Record<string, unknown>, reports?: Record<string, unknown> } = {}): Promise<CsSetup> {
  const cs = await startCsSimulator()
  const config = exchangeConfig(exchangeOrganizations(), {
    timeseries: service('/v1/hq', { base_url: cs.url, timeout_ms: 500, ...settings.timeseries }),
    reports: service('/v1/reports', settings.reports),
  })
  const { app } = await buildServiceModulesApp(config, [timeseriesService, reportsService], { standardHeaders: true })
  t.teardown(async () => {
    await app.close()
    await cs.close()
  })
  return { app, cs, hq: { [TEST_ORG_HEADER]: HQ } }
}
