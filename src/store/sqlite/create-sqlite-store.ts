import type { Store } from '../store.js'
import type { Migration } from '../migration.js'
import { openSqlite } from './open-sqlite.js'
import { migrateSqlite } from './migrate.js'
import { sqlitePaymentsMigrations } from './payments-migrations.js'
import { sqliteIdempotencyMigrations } from './idempotency-migrations.js'
import { sqliteDispatchMigrations } from './dispatch-migrations.js'
import { createSqlitePaymentIntentStore } from './payment-intent-store.js'
import { createSqliteIdempotencyStore } from './idempotency-store.js'
import { createSqliteDispatchStore } from './dispatch-store.js'

/** Every module's migrations, in the order they are applied. A new module appends its list here. */
export const sqliteMigrations: readonly Migration[] = [
  ...sqlitePaymentsMigrations,
  ...sqliteIdempotencyMigrations,
  ...sqliteDispatchMigrations,
]

/** Opens the SQLite file (created when missing), migrates it, and builds every sub-store over one connection. */
export function createSqliteStore (file: string): Store {
  const db = openSqlite(file)
  try {
    migrateSqlite(db, sqliteMigrations)
    return {
      driver: 'sqlite',
      payments: createSqlitePaymentIntentStore(db),
      idempotency: createSqliteIdempotencyStore(db),
      dispatches: createSqliteDispatchStore(db),
      ping: async () => { db.prepare('SELECT 1').get() },
      close: async () => { db.close() },
    }
  } catch (error) {
    db.close()
    throw error
  }
}
