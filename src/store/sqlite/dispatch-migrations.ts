import type { Migration } from '../migration.js'

/**
 * SQLite tables of fan-out dispatches, applied once by the store's migration runner (`migrateSqlite`).
 * `fanout_dispatch_stores` rows with `delivery_status = 'pending'` are the outbox.
 */
export const sqliteDispatchMigrations: readonly Migration[] = [
  {
    id: 'fanout-0001-dispatches',
    sql: `
      CREATE TABLE IF NOT EXISTS fanout_dispatches (
        dispatch_id    TEXT PRIMARY KEY,
        owner_org_id   TEXT NOT NULL,
        client_id      TEXT NOT NULL,
        operation_type TEXT NOT NULL,
        payload        TEXT NOT NULL,
        status         TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        committed_at   TEXT,
        completed_at   TEXT,
        lease_until    INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS fanout_dispatches_committing ON fanout_dispatches (status, lease_until);
      CREATE TABLE IF NOT EXISTS fanout_dispatch_stores (
        dispatch_id     TEXT NOT NULL REFERENCES fanout_dispatches (dispatch_id),
        position        INTEGER NOT NULL,
        store_org_id    TEXT NOT NULL,
        preview         TEXT NOT NULL,
        delivery_status TEXT,
        attempts        INTEGER NOT NULL DEFAULT 0,
        delivery_result TEXT,
        delivery_error  TEXT,
        updated_at      TEXT,
        PRIMARY KEY (dispatch_id, store_org_id)
      );
    `,
  },
]
