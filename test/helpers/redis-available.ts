import { Redis } from 'ioredis'

/** The shared Redis of the tests (never flushed: each test file writes under a key prefix of its own). */
export const testRedisUrl = process.env.LANEGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Whether a Redis answers PING at `url` (one short-lived connection, no retries). */
export async function redisAvailable (url: string = testRedisUrl): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  try {
    await probe.connect()
    return (await probe.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}
