import type { Migration } from '../migration.js'

/** SQLite tables of payment intents and their state-change events. Times are milliseconds since the epoch. */
export const sqlitePaymentsMigrations: readonly Migration[] = [
  {
    id: 'payments-0001-intents',
    sql: `
      CREATE TABLE IF NOT EXISTS payment_intents (
        id                   TEXT PRIMARY KEY,
        owner_org_id         TEXT NOT NULL,
        client_id            TEXT NOT NULL,
        amount               INTEGER NOT NULL,
        currency             TEXT NOT NULL,
        status               TEXT NOT NULL,
        capture_method       TEXT NOT NULL,
        description          TEXT,
        metadata             TEXT NOT NULL,
        organization_id      TEXT NOT NULL,
        connected_account_id TEXT NOT NULL,
        destination          TEXT NOT NULL,
        client_secret        TEXT NOT NULL,
        created_at           INTEGER NOT NULL,
        canceled_at          INTEGER,
        cancellation_reason  TEXT
      );
      CREATE TABLE IF NOT EXISTS payment_intent_events (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        intent_id   TEXT NOT NULL REFERENCES payment_intents (id),
        from_status TEXT,
        to_status   TEXT NOT NULL,
        at          INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS payment_intent_events_intent ON payment_intent_events (intent_id, seq);
    `,
  },
  {
    // A create with an Idempotency-Key carries a digest of (client, route, key) on the row itself, so a retry after
    // a crash between storing the intent and recording the response finds the intent instead of making a second.
    id: 'payments-0002-idempotency-ref',
    sql: `
      ALTER TABLE payment_intents ADD COLUMN idempotency_ref TEXT;
      CREATE UNIQUE INDEX IF NOT EXISTS payment_intents_idempotency_ref ON payment_intents (idempotency_ref);
    `,
  },
  {
    // The request that made the last status change (a cancel with an Idempotency-Key) leaves its (client, route,
    // key) digest on the row, in the same transaction as the change, so a retry after its answer was lost (the
    // database failed while remembering it, or a crash) finds the change already made instead of answering 409.
    id: 'payments-0003-status-idempotency-ref',
    sql: 'ALTER TABLE payment_intents ADD COLUMN status_idempotency_ref TEXT;',
  },
]
