import { randomFillSync } from 'node:crypto'

/**
 * Random token ids from a pool: one `randomFillSync` call fills 256 ids instead of one `randomBytes` call (and
 * buffer allocation) per token. Every byte is used once; the pool is refilled when spent.
 */
const ID_BYTES = 16
const POOL_IDS = 256
const pool = Buffer.alloc(ID_BYTES * POOL_IDS)
let offset = pool.length

/** 128 random bits, base64url (22 characters), for a token's `jti`. */
export function randomTokenId (): string {
  if (offset >= pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES)
  offset += ID_BYTES
  return id
}
