/**
 * One schema change. Each store module (payments, idempotency, dispatches) keeps its own ordered list in
 * `<driver>/<module>-migrations.ts`; `create-<driver>-store.ts` concatenates the lists, and the runner applies the
 * ids not yet recorded in `lanegate_migrations`, each in its own transaction. Ids are never reused or edited:
 * a change is a new entry. Statements are written idempotently too (`IF NOT EXISTS`), so a module that also runs
 * its own list (the dispatch store does) stays harmless.
 */
export interface Migration {
  /** Unique, stable, `<module>-<nnnn>-<what>`. */
  readonly id: string
  readonly sql: string
}
