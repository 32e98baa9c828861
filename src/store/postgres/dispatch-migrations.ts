import type { Migration } from '../migration.js'

/**
 * PostgreSQL tables of fan-out dispatches, applied once by the store's migration runner (`migratePostgres`, under
 * an advisory lock so instances starting together do not race on the catalog).
 * `fanout_dispatch_stores` rows with `delivery_status = 'pending'` are the outbox.
 */
export const postgresDispatchMigrations: readonly Migration[] = [
  {
    id: 'fanout-0001-dispatches',
    sql: `
      CREATE TABLE IF NOT EXISTS fanout_dispatches (
        dispatch_id    TEXT PRIMARY KEY,
        owner_org_id   TEXT NOT NULL,
        client_id      TEXT NOT NULL,
        operation_type TEXT NOT NULL,
        payload        JSONB NOT NULL,
        status         TEXT NOT NULL,
        created_at     TIMESTAMPTZ NOT NULL,
        committed_at   TIMESTAMPTZ,
        completed_at   TIMESTAMPTZ,
        lease_until    BIGINT NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS fanout_dispatches_committing ON fanout_dispatches (status, lease_until);
      CREATE TABLE IF NOT EXISTS fanout_dispatch_stores (
        dispatch_id     TEXT NOT NULL REFERENCES fanout_dispatches (dispatch_id),
        position        INTEGER NOT NULL,
        store_org_id    TEXT NOT NULL,
        preview         JSONB NOT NULL,
        delivery_status TEXT,
        attempts        INTEGER NOT NULL DEFAULT 0,
        delivery_result JSONB,
        delivery_error  JSONB,
        updated_at      TIMESTAMPTZ,
        PRIMARY KEY (dispatch_id, store_org_id)
      );
    `,
  },
]
