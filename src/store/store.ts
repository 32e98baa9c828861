import type { PaymentIntentStore } from './payment-intent-store.js'
import type { IdempotencyStore } from './idempotency-store.js'
import type { DispatchStore } from './dispatch-store.js'

export type * from './payment-intent-store.js'
export type * from './idempotency-store.js'

/**
 * Durable state behind one interface: SQLite (embedded default) or PostgreSQL (several gateway instances).
 * Built by `createStore` (src/store/create-store.ts). The store is composed of one sub-store per module; each
 * module has an interface file here (`<module>-store.ts`), an implementation and a migration list per driver
 * (`sqlite/<module>-*.ts`, `postgres/<module>-*.ts`), and one contract test run against both drivers.
 * Adding a module: write those files, add the sub-store below, and wire it in both `create-<driver>-store.ts`.
 */
export interface Store {
  /** Payment intents and their state-change events. */
  readonly payments: PaymentIntentStore
  /** Idempotency-Key records of the payments POST routes. */
  readonly idempotency: IdempotencyStore
  /** Fan-out dispatches and their delivery outbox (owned by the fan-out service). */
  readonly dispatches: DispatchStore
  /** Which driver backs the store (for logs and health output). */
  readonly driver: 'sqlite' | 'postgres'
  /** Resolves when the database answers a trivial query (readiness checks); rejects otherwise. */
  ping (): Promise<void>
  /** Closes the database (waits for queries in flight). */
  close (): Promise<void>
}
