import type { Pool } from 'pg'
import type { Migration } from '../migration.js'
import { withTransaction } from './transaction.js'

/**
 * Applies the migrations not yet recorded in `lanegate_migrations` (of the current schema), in one transaction
 * under an advisory lock, so gateway instances starting together apply each migration once and never race on
 * the catalog. Returns the ids applied now.
 */
export async function migratePostgres (pool: Pool, migrations: readonly Migration[]): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('lanegate:migrations:' || current_schema()))")
    await client.query(`CREATE TABLE IF NOT EXISTS lanegate_migrations (
      id         TEXT PRIMARY KEY,
      applied_at BIGINT NOT NULL
    )`)
    const done = await client.query<{ id: string }>('SELECT id FROM lanegate_migrations')
    const known = new Set(done.rows.map((r) => r.id))
    const applied: string[] = []
    for (const migration of migrations) {
      if (known.has(migration.id)) continue
      await client.query(migration.sql)
      await client.query('INSERT INTO lanegate_migrations (id, applied_at) VALUES ($1, $2)', [migration.id, Date.now()])
      applied.push(migration.id)
    }
    return applied
  })
}
