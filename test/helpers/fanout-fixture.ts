import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { GatewayConfig, OrganizationConfig, ServiceConfig } from '../../src/config/types.js'
import { fanoutService } from '../../src/services/fanout/index.js'
import type { FanoutSettings } from '../../src/services/fanout/settings.js'
import type { DispatchStore } from '../../src/store/dispatch-store.js'
import { createSqliteStore } from '../../src/store/sqlite/create-sqlite-store.js'
import { baseTestConfig } from './base-config.js'
import { buildServiceModulesApp, TEST_ORG_HEADER } from './service-modules-app.js'
import type { SharedUpstreams } from '../../src/upstream/registry.js'
import { startStubLane, type LaneMode, type StubLane } from './fanout-lane.js'

/** The `price-change` operation every fan-out test registers. */
export const priceChange = {
  description: 'Changes one product\'s shelf price.',
  payload_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['product_code', 'retail_price'],
    properties: {
      product_code: { type: 'string', pattern: '^\\d{1,14}$', description: 'Product code.' },
      retail_price: { type: 'string', pattern: '^\\d{1,5}\\.\\d{2}$', description: 'New price.' },
    },
  },
  preview_path: '/fanout/price-change/preview',
  apply_path: '/fanout/price-change/apply',
}

export const validPayload = { product_code: '4011', retail_price: '0.79' }

export interface FanoutFixture {
  app: FastifyInstance
  /** Lanes of org_hq's stores org_s1..org_sN, by store id. */
  lanes: Map<string, StubLane>
  storeIds: string[]
  dispatches: DispatchStore
  preview (body: unknown, org?: string): Promise<LightMyRequestResponse>
  commit (dispatchId: string, org?: string): Promise<LightMyRequestResponse>
  get (dispatchId: string, org?: string): Promise<LightMyRequestResponse>
  /** A reload that removes these stores from the config (their lanes' upstreams retire). */
  removeStores (ids: string[]): Promise<void>
  upstreams: SharedUpstreams
}

/**
 * org_hq owns stores org_s1..org_sN (each with a stub lane), org_inactive (install off) and org_nolane; org_east
 * is org_hq's child with org_e1; org_other is a separate tree with org_x1.
 */
export async function fanoutFixture (t: { teardown (fn: () => unknown): void }, options: {
  stores?: number
  settings?: Partial<FanoutSettings>
  laneModes?: Record<string, Partial<LaneMode>>
} = {}): Promise<FanoutFixture> {
  const count = options.stores ?? 3
  const lanes = new Map<string, StubLane>()
  const storeIds = Array.from({ length: count }, (_, i) => `org_s${i + 1}`)
  for (const id of [...storeIds, 'org_e1', 'org_x1']) {
    const lane = await startStubLane(options.laneModes?.[id])
    lanes.set(id, lane)
    t.teardown(() => lane.close())
  }
  const laneOf = (id: string) => ({ base_url: (lanes.get(id) as StubLane).url, connect_timeout_ms: 1000, response_timeout_ms: 5000, max_sockets: 8 })
  const organizations: OrganizationConfig[] = [
    {
      id: 'org_hq',
      name: 'HQ',
      stores: [
        ...storeIds.map((id) => ({ id, name: id, install_active: true, lane: laneOf(id) })),
        { id: 'org_inactive', name: 'closed', install_active: false, lane: laneOf('org_s1') },
        { id: 'org_nolane', name: 'no lane', install_active: true },
      ],
    },
    { id: 'org_east', name: 'East', parent: 'org_hq', stores: [{ id: 'org_e1', name: 'e1', install_active: true, lane: laneOf('org_e1') }] },
    { id: 'org_other', name: 'Other', stores: [{ id: 'org_x1', name: 'x1', install_active: true, lane: laneOf('org_x1') }] },
  ]
  const service: ServiceConfig = {
    prefix: '/v1/fanout',
    envelope: 'exchange',
    policies: [],
    routes: {},
    operations: { 'price-change': priceChange },
    retry: { attempts: 4, base_delay_ms: 5, max_delay_ms: 20 },
    lane_timeout_ms: 2000,
    ...options.settings,
  }
  const configOf = (tree: OrganizationConfig[]): GatewayConfig => baseTestConfig({ organizations: tree, services: { fanout: service } })
  const store = createSqliteStore(':memory:')
  const { app, setConfig, upstreams } = await buildServiceModulesApp(configOf(organizations), [fanoutService], { store })
  t.teardown(async () => {
    await app.close()
    await store.close()
  })

  const send = (method: 'GET' | 'POST', url: string, org: string, body?: unknown) => app.inject({
    method,
    url,
    headers: { [TEST_ORG_HEADER]: org, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  })
  return {
    app,
    lanes,
    storeIds,
    dispatches: store.dispatches,
    preview: (body, org = 'org_hq') => send('POST', '/v1/fanout/preview', org, body),
    commit: (id, org = 'org_hq') => send('POST', `/v1/fanout/dispatches/${id}/commit`, org),
    get: (id, org = 'org_hq') => send('GET', `/v1/fanout/dispatches/${id}`, org),
    removeStores: (ids) => setConfig(configOf(organizations.map((o) => ({ ...o, stores: o.stores.filter((s) => !ids.includes(s.id)) })))),
    upstreams,
  }
}

/** Total requests all lanes received. */
export function laneRequestCount (lanes: Map<string, StubLane>): number {
  return [...lanes.values()].reduce((n, lane) => n + lane.requests.length, 0)
}
