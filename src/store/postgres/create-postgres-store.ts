import pg from 'pg'
import type { Store } from '../store.js'
import type { Migration } from '../migration.js'
import { migratePostgres } from './migrate.js'
import { postgresPaymentsMigrations } from './payments-migrations.js'
import { postgresIdempotencyMigrations } from './idempotency-migrations.js'
import { postgresDispatchMigrations } from './dispatch-migrations.js'
import { createPostgresPaymentIntentStore } from './payment-intent-store.js'
import { createPostgresIdempotencyStore } from './idempotency-store.js'
import { createPostgresDispatchStore } from './dispatch-store.js'

/** Every module's migrations, in the order they are applied. A new module appends its list here. */
export const postgresMigrations: readonly Migration[] = [
  ...postgresPaymentsMigrations,
  ...postgresIdempotencyMigrations,
  ...postgresDispatchMigrations,
]

export interface PostgresStoreOptions {
  connectionString: string
  /** Schema the tables live in (created when missing); default: the server's search_path (`public`). */
  schema?: string
  /** Pool size; default 10. */
  max?: number
}

/** How long a query may wait for a pooled connection (a new one included) before it fails. */
const CONNECT_TIMEOUT_MS = 5_000

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Connects a pool, migrates the schema, and builds every sub-store over the pool. */
export async function createPostgresStore (options: PostgresStoreOptions): Promise<Store> {
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new Error(`invalid PostgreSQL schema name "${options.schema}"`)
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    // A database that is down or restarting answers a request with 503 within this, never a hang past
    // server.request_timeout_ms waiting for a pooled connection.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    options: options.schema === undefined ? undefined : `-c search_path=${options.schema}`,
  })
  // An idle client losing its connection must not crash the process; the next query reports the problem.
  pool.on('error', () => {})
  // Nor a checked-out one: pg-pool listens with `once` while a pool.query runs, and a connection ended by the
  // server (57P01 on a fast shutdown, then the socket's own error) can emit twice; the second, unheard, was an
  // uncaught error that ended the gateway mid-restart. Every client keeps a listener for its life.
  pool.on('connect', function listenForClientErrors (client) { client.on('error', () => {}) })
  try {
    if (options.schema !== undefined) await createSchema(pool, options.schema)
    await migratePostgres(pool, postgresMigrations)
  } catch (error) {
    await pool.end()
    throw error
  }
  return {
    driver: 'postgres',
    payments: createPostgresPaymentIntentStore(pool),
    idempotency: createPostgresIdempotencyStore(pool),
    dispatches: createPostgresDispatchStore(pool),
    ping: async () => { await pool.query('SELECT 1') },
    close: () => pool.end(),
  }
}

/**
 * `CREATE SCHEMA IF NOT EXISTS` is not safe against itself: two instances starting at once on a new schema can
 * both pass the existence check, and the second then fails on the catalog's unique index (23505) or with
 * duplicate_schema (42P06). Either means the schema now exists, which is all that is asked.
 */
async function createSchema (pool: pg.Pool, schema: string): Promise<void> {
  try {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code !== '23505' && code !== '42P06') throw error
  }
}
