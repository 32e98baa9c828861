import type { Pool, PoolClient } from 'pg'

/** Runs `fn` in a transaction on one pooled client: COMMIT on success, ROLLBACK (and rethrow) on failure. */
export async function withTransaction<T> (pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  // A checked-out client whose connection ends between two queries (the database shut down or restarted) emits
  // 'error' on itself, not on the pool: without a listener that was an uncaught error, i.e. the end of the
  // process. The next query fails instead, and the broken client is discarded below.
  let broken: unknown
  const onError = (error: unknown): void => { broken = error }
  client.on('error', onError)
  try {
    await client.query('BEGIN')
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    broken ??= await client.query('ROLLBACK').then(() => undefined, (rollbackError: unknown) => rollbackError)
    throw error
  } finally {
    client.off('error', onError)
    // release(error) destroys the connection rather than pooling a broken one.
    client.release(broken instanceof Error ? broken : broken === undefined ? undefined : true)
  }
}
