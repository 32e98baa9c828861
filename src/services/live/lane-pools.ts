import { Pool } from 'undici'
import type { LaneConfig } from '../../config/types.js'

interface PoolEntry {
  /** The lane settings the pool was built from: the same object (one snapshot) is the common case. */
  lane: LaneConfig
  fingerprint: string
  pool: Pool
}

/**
 * One undici connection pool per store lane, built on first use and reused. Its `connections` is the lane's
 * `max_sockets`: the lane's concurrency cap, so a hung lane fills only its own connections and other lanes are
 * unaffected (F10). Connections stay open between requests (keep-alive, bounded by the lane's own Keep-Alive
 * hint). When a reload changes a lane's URL, socket cap or timeouts the pool is replaced: requests in flight
 * finish on the old pool, which then closes its connections.
 */
export class LanePools {
  private readonly entries = new Map<string, PoolEntry>()

  /** The pool for a store's lane, replaced when its configuration changed. */
  get (storeId: string, lane: LaneConfig): Pool {
    const entry = this.entries.get(storeId)
    if (entry !== undefined && entry.lane === lane) return entry.pool
    const fingerprint = fingerprintOf(lane)
    if (entry !== undefined && entry.fingerprint === fingerprint) {
      entry.lane = lane
      return entry.pool
    }
    if (entry !== undefined) entry.pool.close().catch(() => {})
    const pool = new Pool(new URL(lane.base_url).origin, {
      connections: lane.max_sockets,
      pipelining: 1,
      connect: { timeout: lane.connect_timeout_ms },
      // Backstops: the relay runs its own timer from the start of the request to the lane's headers (queueing for
      // a connection included); once the lane answered, a body silent for this long is cut off.
      headersTimeout: lane.response_timeout_ms,
      bodyTimeout: lane.response_timeout_ms,
    })
    this.entries.set(storeId, { lane, fingerprint, pool })
    return pool
  }

  /** Closes every connection of every pool (service shutdown). */
  async close (): Promise<void> {
    const pools = [...this.entries.values()].map((entry) => entry.pool)
    this.entries.clear()
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => {})))
  }
}

function fingerprintOf (lane: LaneConfig): string {
  return `${lane.base_url}|${lane.max_sockets}|${lane.connect_timeout_ms}|${lane.response_timeout_ms}`
}
