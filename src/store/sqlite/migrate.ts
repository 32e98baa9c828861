import type Database from 'better-sqlite3'
import type { Migration } from '../migration.js'

/**
 * Applies the migrations not yet recorded in `lanegate_migrations`, in order, each with its record in one
 * IMMEDIATE transaction (a second process opening the same file waits on the write lock, then sees the record
 * and skips it). Returns the ids applied now.
 */
export function migrateSqlite (db: Database.Database, migrations: readonly Migration[]): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS lanegate_migrations (
    id         TEXT PRIMARY KEY,
    applied_at INTEGER NOT NULL
  )`)
  const isApplied = db.prepare<[string], { id: string }>('SELECT id FROM lanegate_migrations WHERE id = ?')
  const record = db.prepare('INSERT INTO lanegate_migrations (id, applied_at) VALUES (?, ?)')
  const applied: string[] = []
  for (const migration of migrations) {
    const apply = db.transaction(() => {
      if (isApplied.get(migration.id) !== undefined) return
      db.exec(migration.sql)
      record.run(migration.id, Date.now())
      applied.push(migration.id)
    })
    apply.immediate()
  }
  return applied
}
