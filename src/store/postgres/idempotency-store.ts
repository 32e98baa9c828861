import type { Pool } from 'pg'
import type { BeginResult, IdempotencyStore } from '../idempotency-store.js'

interface KeyRow {
  fingerprint: string
  state: 'in_progress' | 'completed'
  status_code: number | null
  body: unknown
}

/** Times `begin` retries when the row it collided with vanished (released) before it could be read. */
const BEGIN_ATTEMPTS = 3

/**
 * IdempotencyStore over a pg Pool. `begin` relies on the primary key: of concurrent INSERT … ON CONFLICT DO
 * NOTHING statements for one key exactly one inserts, whichever instance runs it.
 */
export function createPostgresIdempotencyStore (pool: Pool): IdempotencyStore {
  return {
    async begin (scope, options): Promise<BeginResult> {
      const { clientId, route, key } = scope
      await pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [options.now])
      for (let attempt = 0; attempt < BEGIN_ATTEMPTS; attempt++) {
        await pool.query(`DELETE FROM idempotency_keys WHERE client_id = $1 AND route = $2 AND key = $3
          AND state = 'in_progress' AND created_at <= $4`, [clientId, route, key, options.now - options.abandonAfterMs])
        const inserted = await pool.query(`INSERT INTO idempotency_keys
          (client_id, route, key, fingerprint, state, created_at, expires_at)
          VALUES ($1, $2, $3, $4, 'in_progress', $5, $6) ON CONFLICT (client_id, route, key) DO NOTHING`,
        [clientId, route, key, options.fingerprint, options.now, options.now + options.ttlMs])
        if (inserted.rowCount === 1) return { state: 'new' }
        const found = await pool.query<KeyRow>(`SELECT fingerprint, state, status_code, body FROM idempotency_keys
          WHERE client_id = $1 AND route = $2 AND key = $3`, [clientId, route, key])
        const row = found.rows[0]
        if (row === undefined) continue
        if (row.fingerprint !== options.fingerprint) return { state: 'mismatch' }
        if (row.state === 'in_progress') return { state: 'in_progress' }
        return { state: 'completed', response: { statusCode: row.status_code as number, body: row.body } }
      }
      return { state: 'in_progress' }
    },

    async complete (scope, response, now) {
      await pool.query(`UPDATE idempotency_keys SET state = 'completed', status_code = $1, body = $2, completed_at = $3
        WHERE client_id = $4 AND route = $5 AND key = $6 AND state = 'in_progress'`,
      [response.statusCode, JSON.stringify(response.body), now, scope.clientId, scope.route, scope.key])
    },

    async release (scope) {
      await pool.query(`DELETE FROM idempotency_keys WHERE client_id = $1 AND route = $2 AND key = $3
        AND state = 'in_progress'`, [scope.clientId, scope.route, scope.key])
    },
  }
}
