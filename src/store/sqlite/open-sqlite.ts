import Database from 'better-sqlite3'

/** How long a statement waits for another process's write lock before SQLITE_BUSY. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000

/**
 * Opens (creating) a SQLite database for the store: WAL so readers never block the writer, and
 * `synchronous=FULL` so every committed transaction is fsynced to the WAL before the call returns — a response
 * the gateway sent survives `kill -9` and power loss (NORMAL would only survive a process crash).
 */
export function openSqlite (file: string): Database.Database {
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
    db.pragma('foreign_keys = ON')
  } catch (error) {
    db.close()
    throw error
  }
  return db
}
