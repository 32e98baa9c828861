import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { StorageConfig } from '../config/types.js'
import type { Store } from './store.js'
import { createSqliteStore } from './sqlite/create-sqlite-store.js'
import { guardStore } from './store-unavailable.js'

/**
 * Opens the configured store and runs its migrations. SQLite: `sqlite_file` relative to `dataDir` (its folder
 * is created). PostgreSQL: `postgres_url`, tables in `postgres_schema` (default: the server's search_path).
 * Either way a request that finds the database unavailable gets 503 `store_unavailable` (store-unavailable.ts).
 */
export async function createStore (config: StorageConfig, dataDir: string): Promise<Store> {
  if (config.driver === 'postgres') {
    if (config.postgres_url === undefined || config.postgres_url === '') {
      throw new Error('storage.postgres_url is required when storage.driver is postgres')
    }
    const { createPostgresStore } = await import('./postgres/create-postgres-store.js')
    return guardStore(await createPostgresStore({ connectionString: config.postgres_url, schema: config.postgres_schema }))
  }
  const file = resolve(dataDir, config.sqlite_file)
  mkdirSync(dirname(file), { recursive: true })
  return guardStore(createSqliteStore(file))
}
