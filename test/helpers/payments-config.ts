import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createSqliteStore } from '../../src/store/sqlite/create-sqlite-store.js'
import { createPostgresStore } from '../../src/store/postgres/create-postgres-store.js'
import type { Store } from '../../src/store/store.js'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig, OrganizationConfig, ServiceConfig } from '../../src/config/types.js'
import { baseTestConfig } from './base-config.js'
import { buildServiceModulesApp, TEST_CLIENT_HEADER, TEST_ORG_HEADER } from './service-modules-app.js'

/** The test database of the common brief (trust auth). */
export const TEST_POSTGRES_URL = process.env.LANEGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A store backend a contract suite can open fresh instances of; `open` again reaches the same data. */
export interface StoreBackend {
  name: 'sqlite' | 'postgres'
  open (): Promise<Store>
  /** Removes everything the backend created (temp folder or schema). */
  destroy (): Promise<void>
}

export async function sqliteBackend (): Promise<StoreBackend> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-store-'))
  return {
    name: 'sqlite',
    open: async () => createSqliteStore(join(dir, 'lanegate.db')),
    destroy: () => rm(dir, { recursive: true, force: true }),
  }
}

/**
 * A PostgreSQL backend in a schema of its own (`lg_test_<random>`), dropped by `destroy`. Resolves a reason
 * string instead when the server is unreachable; with LANEGATE_REQUIRE_SERVICES=1 it throws instead, so the
 * suite fails rather than skips.
 */
export async function postgresBackend (): Promise<StoreBackend | string> {
  const probe = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await probe.connect()
  } catch (error) {
    const reason = `PostgreSQL unreachable at ${TEST_POSTGRES_URL}: ${(error as Error).message}`
    if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw new Error(reason)
    return reason
  } finally {
    await probe.end().catch(() => {})
  }
  const schema = `lg_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  return {
    name: 'postgres',
    open: () => createPostgresStore({ connectionString: TEST_POSTGRES_URL, schema }),
    destroy: async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
      await client.connect()
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      } finally {
        await client.end()
      }
    },
  }
}

// ---- Payments and content served alone (service-modules-app.ts) ----

/**
 * The organizations of the payments/content tests:
 * - org_hq (acct_hq) with stores org_store_1 (acct_store_1) and org_store_2 (no account), and a child
 *   organization org_child (acct_child) with store org_store_c;
 * - org_noacct (no account anywhere);
 * - org_other (acct_other) with store org_store_9 (acct_store_9): outside org_hq's tree.
 */
export const testOrganizations: OrganizationConfig[] = [
  {
    id: 'org_hq',
    name: 'HQ',
    connected_account: { id: 'acct_hq', processor_account_id: 'acct_1Hq' },
    stores: [
      { id: 'org_store_1', name: 'Store 1', install_active: true, connected_account: { id: 'acct_store_1', processor_account_id: 'acct_1Store1' } },
      { id: 'org_store_2', name: 'Store 2', install_active: true },
    ],
  },
  {
    id: 'org_child',
    name: 'Child of HQ',
    parent: 'org_hq',
    connected_account: { id: 'acct_child', processor_account_id: 'acct_1Child' },
    stores: [{ id: 'org_store_c', name: 'Child store', install_active: true }],
  },
  { id: 'org_noacct', name: 'No account', stores: [] },
  {
    id: 'org_other',
    name: 'Other HQ',
    connected_account: { id: 'acct_other', processor_account_id: 'acct_1Other' },
    stores: [{ id: 'org_store_9', name: 'Store 9', install_active: true, connected_account: { id: 'acct_store_9', processor_account_id: 'acct_1Store9' } }],
  },
]

export const paymentsServiceConfig = (settings: Record<string, unknown> = {}): ServiceConfig => ({
  prefix: '/api/v1/ecommerce',
  envelope: 'payments',
  policies: [],
  routes: {},
  processor: { name: 'stripe', publishable_key: 'pk_test_123', mode: 'test' },
  ...settings,
})

export const contentServiceConfig = (sourceDir: string, settings: Record<string, unknown> = {}): ServiceConfig => ({
  prefix: '/public/v1',
  envelope: 'plain',
  policies: [],
  routes: {},
  source_dir: sourceDir,
  reload_check_ms: 0,
  ...settings,
})

export function serviceTestConfig (name: string, service: ServiceConfig): GatewayConfig {
  return baseTestConfig({ organizations: testOrganizations, services: { [name]: service } })
}

// ---- Payments test app ----

export interface PaymentsTestApp {
  app: FastifyInstance
  store: Store
  setConfig (config: GatewayConfig): Promise<void>
}

interface Teardown { teardown (fn: () => unknown): void }

/**
 * The payments service over a fresh SQLite store in a temp folder (closed and removed at teardown). `wrap`
 * lets a test decorate the store (e.g. slow down `payments.create`).
 */
export async function buildPaymentsApp (t: Teardown, options: { settings?: Record<string, unknown>, wrap?: (store: Store) => Store } = {}): Promise<PaymentsTestApp> {
  const { default: payments } = await import('../../src/services/payments/index.js')
  const backend = await sqliteBackend()
  const store = await backend.open()
  const config = serviceTestConfig(payments.name, paymentsServiceConfig(options.settings))
  const { app, setConfig } = await buildServiceModulesApp(config, [payments], { store: options.wrap?.(store) ?? store })
  t.teardown(async () => { await app.close(); await store.close(); await backend.destroy() })
  return { app, store, setConfig }
}

/** Headers of a caller of `org` (client id `svc-<org>` unless given). */
export function caller (org: string, extra: Record<string, string> = {}, client?: string): Record<string, string> {
  return { [TEST_ORG_HEADER]: org, ...(client === undefined ? {} : { [TEST_CLIENT_HEADER]: client }), ...extra }
}
