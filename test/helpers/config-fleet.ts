import { mkdir } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { ConfigStore } from '../../src/config-store/config-store.js'
import { gatewayFixture, type GatewayFixture } from './gateway-fixture.js'
import type { SpawnedGateway } from './spawn-gateway.js'
import { waitFor } from './wait-for.js'

interface Teardown { teardown (fn: () => unknown): void }

export const PROCESSOR_PATH = '/api/v1/ecommerce/config/processor'

/**
 * The demo's processor config route, which the fleet tests change, needing `scope` (`read`: the read-only
 * `demo-status` token passes it, as shipped; `create`: it does not).
 */
export function processorNeeds (fixture: GatewayFixture, scope: 'read' | 'create'): GatewayFixture {
  return fixture.set('services.payments.routes.processor_config', [{ scope: { all: [`commerce:payment-intents.${scope}`] } }])
}

/**
 * The demo config as a fleet's (push its `text()`, derive edited versions from it): the worker count per host
 * (`${LANEGATE_WORKERS:-1}`) and a payments rate limit no load test reaches. Its text keeps the demo's comments,
 * as a pushed file does.
 */
export function fleetConfig (): GatewayFixture {
  return gatewayFixture()
    .set('server.workers', '${LANEGATE_WORKERS:-1}')
    .set('rate_limits.payments-per-ip.points', 100_000_000)
}

export interface FleetInstance extends SpawnedGateway {
  /** Its id in the instances table (`<host>:<pid of the started process>`). */
  instanceId: string
  workers: number
  stop (): Promise<void>
}

/**
 * `lanegate start --config-store URL` (the fleet's fixture started, ended at teardown) in a folder of its own under
 * `home`: with a store, its data dir and saved copy are found from the working directory, not the file's.
 */
export async function startFollower (t: Teardown, options: { home: string, name: string, storeUrl: string, workers: number, fleet: GatewayFixture, env?: NodeJS.ProcessEnv }): Promise<FleetInstance> {
  const cwd = join(options.home, options.name)
  await mkdir(cwd, { recursive: true })
  const { gateway: gw } = await options.fleet.start(t, {
    cwd,
    env: { LANEGATE_WORKERS: String(options.workers), ...options.env },
    args: ['--port', '0', '--host', '127.0.0.1', '--config-store', options.storeUrl],
  })
  return {
    ...gw,
    instanceId: `${hostname()}:${gw.child.pid}`,
    workers: options.workers,
    stop: async () => {
      if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGTERM')
      await gw.exited
    },
  }
}

/** The processor config route's status for `token`: 200 for demo-status as shipped (`processorNeeds(fixture, 'read')`), 403 once it needs create. */
export async function processorStatus (gw: SpawnedGateway, token: string): Promise<number> {
  return (await fetch(`${gw.base}${PROCESSOR_PATH}`, { headers: { authorization: `Bearer ${token}` } })).status
}

/**
 * Waits until every worker of each instance reports `version` in the instances table; resolves with, per
 * instance id, when its last worker applied it (ms since the epoch).
 */
export async function appliedEverywhere (store: ConfigStore, instances: readonly FleetInstance[], version: number, timeoutMs?: number): Promise<Map<string, number>> {
  return waitFor(async () => {
    const rows = await store.instances()
    const at = new Map<string, number>()
    for (const instance of instances) {
      const workers = rows.filter((r) => r.instanceId === instance.instanceId && r.applied?.version === version)
      if (workers.length < instance.workers) return undefined
      at.set(instance.instanceId, Math.max(...workers.map((w) => w.applied?.at ?? 0)))
    }
    return at
  }, { what: `every worker of ${instances.length} instances to report version ${version}`, intervalMs: 20, timeoutMs })
}
