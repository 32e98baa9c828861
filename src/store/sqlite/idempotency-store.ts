import type Database from 'better-sqlite3'
import type { BeginOptions, BeginResult, IdempotencyScope, IdempotencyStore } from '../idempotency-store.js'

interface KeyRow {
  fingerprint: string
  state: 'in_progress' | 'completed'
  status_code: number | null
  body: string | null
}

/** IdempotencyStore over better-sqlite3; `begin` is one IMMEDIATE transaction. */
export function createSqliteIdempotencyStore (db: Database.Database): IdempotencyStore {
  const purgeExpired = db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?')
  const dropAbandoned = db.prepare(`DELETE FROM idempotency_keys WHERE client_id = ? AND route = ? AND key = ?
    AND state = 'in_progress' AND created_at <= ?`)
  const insertKey = db.prepare(`INSERT INTO idempotency_keys (client_id, route, key, fingerprint, state, created_at, expires_at)
    VALUES (?, ?, ?, ?, 'in_progress', ?, ?) ON CONFLICT (client_id, route, key) DO NOTHING`)
  const selectKey = db.prepare<[string, string, string], KeyRow>(`SELECT fingerprint, state, status_code, body
    FROM idempotency_keys WHERE client_id = ? AND route = ? AND key = ?`)
  const completeKey = db.prepare(`UPDATE idempotency_keys SET state = 'completed', status_code = ?, body = ?, completed_at = ?
    WHERE client_id = ? AND route = ? AND key = ? AND state = 'in_progress'`)
  const releaseKey = db.prepare(`DELETE FROM idempotency_keys WHERE client_id = ? AND route = ? AND key = ?
    AND state = 'in_progress'`)

  const begin = db.transaction((scope: IdempotencyScope, options: BeginOptions): BeginResult => {
    const { clientId, route, key } = scope
    purgeExpired.run(options.now)
    dropAbandoned.run(clientId, route, key, options.now - options.abandonAfterMs)
    const inserted = insertKey.run(clientId, route, key, options.fingerprint, options.now, options.now + options.ttlMs)
    if (inserted.changes === 1) return { state: 'new' }
    const row = selectKey.get(clientId, route, key) as KeyRow
    if (row.fingerprint !== options.fingerprint) return { state: 'mismatch' }
    if (row.state === 'in_progress') return { state: 'in_progress' }
    return { state: 'completed', response: { statusCode: row.status_code as number, body: JSON.parse(row.body as string) } }
  })

  return {
    async begin (scope, options) {
      return begin.immediate(scope, options)
    },
    async complete (scope, response, now) {
      completeKey.run(response.statusCode, JSON.stringify(response.body), now, scope.clientId, scope.route, scope.key)
    },
    async release (scope) {
      releaseKey.run(scope.clientId, scope.route, scope.key)
    },
  }
}
