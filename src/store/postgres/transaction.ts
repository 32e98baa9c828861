import type { Pool, PoolClient } from 'pg'

/** Runs `fn` in a transaction on one pooled client: COMMIT on success, ROLLBACK (and rethrow) on failure. */
export async function withTransaction<T> (pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}
