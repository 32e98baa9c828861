import type { Migration } from '../migration.js'

/** PostgreSQL table of Idempotency-Key records. Times are milliseconds since the epoch. */
export const postgresIdempotencyMigrations: readonly Migration[] = [
  {
    id: 'idempotency-0001-keys',
    sql: `
      CREATE TABLE IF NOT EXISTS idempotency_keys (
        client_id    TEXT NOT NULL,
        route        TEXT NOT NULL,
        key          TEXT NOT NULL,
        fingerprint  TEXT NOT NULL,
        state        TEXT NOT NULL,
        status_code  INTEGER,
        body         JSONB,
        created_at   BIGINT NOT NULL,
        expires_at   BIGINT NOT NULL,
        completed_at BIGINT,
        PRIMARY KEY (client_id, route, key)
      );
      CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
]
