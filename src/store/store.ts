/**
 * Durable state behind one interface: SQLite (embedded default) or PostgreSQL (several gateway instances).
 * Owned by the payments/store work; fan-out adds its dispatch tables beside it.
 */
export interface Store {
  close (): Promise<void>
}
