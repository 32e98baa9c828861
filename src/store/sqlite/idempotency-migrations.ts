import type { Migration } from '../migration.js'

/** SQLite table of Idempotency-Key records. Times are milliseconds since the epoch. */
export const sqliteIdempotencyMigrations: readonly Migration[] = [
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
        body         TEXT,
        created_at   INTEGER NOT NULL,
        expires_at   INTEGER NOT NULL,
        completed_at INTEGER,
        PRIMARY KEY (client_id, route, key)
      );
      CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
]
