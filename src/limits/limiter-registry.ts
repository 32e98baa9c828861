import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import { MemoryWindowCounter, StoreCounter, type RequestCounter } from './request-counter.js'
import { SyncedWindowCounter } from './synced-window-counter.js'
import { ipcWindowStore } from './ipc-window-store.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible'
import { IpcCounter } from './ipc-counter.js'
import type { RateLimitConfig, RateLimitStoreConfig } from '../config/types.js'
import type { LimiterRegistry } from './limiter-registry-interface.js'

/** A LimiterRegistry the gateway builds at boot and closes at shutdown. */
export interface OwnedLimiterRegistry extends LimiterRegistry {
  /** Resolves once the store can take requests (Redis connected); rejects when it cannot connect in time. */
  ready (timeoutMs?: number): Promise<void>
  /** Resolves when the counter store answers (Redis PING; memory: at once); rejects otherwise. */
  ping (): Promise<void>
  /**
   * Stops the pre-count timers and sends their last counts (best effort), then closes the Redis connection when
   * the registry opened it (not one passed in).
   */
  close (): Promise<void>
}

const require = createRequire(import.meta.url)

/**
 * The ioredis client class, loaded on first use: with the memory driver ioredis is never loaded (about 25 MB of
 * resident memory saved). A synchronous require, so building a registry stays synchronous.
 */
function redisClientClass (): typeof Redis {
  return (require('ioredis') as typeof import('ioredis')).Redis
}

/** A Redis command slower than this is a store error (fail open or closed), not a hung request. */
const redisCommandTimeoutMs = 1_000

/**
 * Keeps what `make` builds per name for as long as the name's points and window stay the same: a reload that
 * keeps a limit keeps its counts; a changed setting starts afresh (`retire` is given the one it replaces).
 */
function keptBySettings<T> (make: (name: string, limit: RateLimitConfig) => T, retire?: (value: T) => void): (name: string, limit: RateLimitConfig) => T {
  const kept = new Map<string, { settings: string, value: T }>()
  return function keptFor (name, limit) {
    const settings = `${limit.points}/${limit.window_seconds}`
    const known = kept.get(name)
    if (known !== undefined && known.settings === settings) return known.value
    if (known !== undefined) retire?.(known.value)
    const value = make(name, limit)
    kept.set(name, { settings, value })
    return value
  }
}

/** The registry's own Redis client (`driver: redis` without one given), and the last connection error it saw. */
function openLimiterRedis (config: RateLimitStoreConfig): { client: Redis, lastError: () => Error | undefined } {
  if (config.redis_url === undefined) throw new Error('rate_limit_store.redis_url is required when driver is redis')
  let lastConnectionError: Error | undefined
  const RedisClient = redisClientClass()
  const client = new RedisClient(config.redis_url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: redisCommandTimeoutMs,
    // Reconnect forever, but back off up to 2 s: requests meanwhile follow on_store_error.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
  })
  // Connection errors surface as command failures; the 'error' event only needs a listener so it never crashes.
  // The last one is kept for the start-up failure message.
  client.on('error', (error: Error) => { lastConnectionError = error })
  return { client, lastError: () => lastConnectionError }
}

/** Resolves once `client` is ready; rejects after `timeoutMs`, naming the last connection error. */
async function redisReady (client: Redis, timeoutMs: number, lastError: () => Error | undefined): Promise<void> {
  if (client.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup()
      const last = lastError()
      reject(new Error(`the rate-limit Redis did not become ready in time${last ? ` (${last.message})` : ''}`))
    }, timeoutMs)
    function onReady (): void { cleanup(); resolve() }
    function cleanup (): void { clearTimeout(timer); client.off('ready', onReady) }
    client.on('ready', onReady)
  })
}

/**
 * Builds the registry of named rate limiters. Limiters are keyed by limit name: every route naming the same
 * limit shares one counter (D1), and a reload that keeps a limit's points and window keeps its limiter, so
 * counts survive reloads; a changed setting gets a fresh limiter. With `driver: redis` every gateway instance
 * pointed at the same Redis and `key_prefix` shares the counts (D5). Redis commands fail fast while the
 * connection is down (no offline queue), so a store outage becomes `on_store_error` at once (D4). With
 * `sync_interval_ms` > 0 route limits are pre-counted in the process (SyncedWindowCounter: same keys and script,
 * no round trip per request); the token endpoint's limiters stay exact.
 */
export function createLimiterRegistry (config: RateLimitStoreConfig, redis?: Redis): OwnedLimiterRegistry {
  const ownsClient = config.driver === 'redis' && redis === undefined
  const owned = ownsClient ? openLimiterRedis(config) : undefined
  const client: Redis | undefined = owned?.client ?? redis

  const prefix = config.key_prefix.replace(/:+$/, '')

  /**
   * A rate-limiter-flexible limiter whose Redis keys start with `keyPrefix`. Route limits use
   * `<key_prefix>:<limit name>` (documented, shared by every instance); the token endpoint's own limiters use
   * `<key_prefix>#<name>`: a `#` where every route key has its `:`, so no name in gateway.yaml can reach their counts.
   */
  function build (keyPrefix: string, limit: RateLimitConfig): RateLimiterAbstract {
    const options = { keyPrefix, points: limit.points, duration: limit.window_seconds }
    if (config.driver === 'memory' && inWorker) {
      // The primary keys its limiters by prefix alone and never rebuilds one: the settings go into the prefix.
      return new RateLimiterCluster({ ...options, keyPrefix: `${keyPrefix}#${limit.points}/${limit.window_seconds}`, timeoutMs: redisCommandTimeoutMs })
    }
    if (config.driver === 'memory') return new RateLimiterMemory(options)
    return new RateLimiterRedis({ ...options, storeClient: client, rejectIfRedisNotReady: true })
  }

  // A worker of `server.workers` > 1 with the memory driver counts in the primary, so the workers share counts;
  // one process keeps the synchronous in-process counter (no promise on the hot path).
  const inWorker = isLanegateWorker()
  const syncIntervalMs = config.sync_interval_ms
  const synced = new Set<SyncedWindowCounter>()
  // The route counters by limit name, the newest of each (the console asks which keys are closest to their limit).
  const named = new Map<string, RequestCounter>()
  const counters = keptBySettings((name, limit): RequestCounter => {
    const counter = routeCounter(name, limit)
    named.set(name, counter)
    return counter
  }, function retireCounter (counter) {
    // A reload changed the limit's points or window: its pre-count stops (its last counts still go to Redis).
    if (counter instanceof SyncedWindowCounter && synced.delete(counter)) void counter.close()
  })

  function routeCounter (name: string, limit: RateLimitConfig): RequestCounter {
    if (config.driver !== 'memory' && syncIntervalMs > 0) {
      const counter = new SyncedWindowCounter({ client: client as Redis, keyPrefix: `${prefix}:${name}`, points: limit.points, windowSeconds: limit.window_seconds, syncIntervalMs })
      synced.add(counter)
      return counter
    }
    if (config.driver !== 'memory') return new StoreCounter(build(`${prefix}:${name}`, limit))
    if (!inWorker) return new MemoryWindowCounter(limit.points, limit.window_seconds)
    // Workers with the memory driver count in the primary: per request (exact), or pre-counted and synced.
    if (syncIntervalMs === 0) return new IpcCounter(name, limit.points, limit.window_seconds)
    const counter = new SyncedWindowCounter({ store: ipcWindowStore(name, limit.points, limit.window_seconds), points: limit.points, windowSeconds: limit.window_seconds, syncIntervalMs })
    synced.add(counter)
    return counter
  }
  const limiters = keptBySettings((name, limit) => build(`${prefix}#${name}`, limit))
  const localWindows = keptBySettings((_name, limit) => new MemoryWindowCounter(limit.points, limit.window_seconds))
  const countsHere = config.driver === 'memory' && !inWorker

  return {
    onStoreError: config.on_store_error,
    counter: counters,
    get: limiters,
    localWindow: (name, limit) => countsHere ? localWindows(name, limit) : undefined,
    closest (n) {
      return [...named].flatMap(([limit, counter]) => counter instanceof MemoryWindowCounter ? [{ limit, keys: counter.closest(n) }] : [])
    },
    async ready (timeoutMs = 5_000) {
      if (client !== undefined) await redisReady(client, timeoutMs, () => owned?.lastError())
    },
    async ping () {
      // enableOfflineQueue is off: while the connection is down this rejects at once rather than waiting.
      if (client !== undefined) await client.ping()
    },
    async close () {
      await Promise.all([...synced].map((counter) => counter.close()))
      synced.clear()
      if (ownsClient && client !== undefined) {
        client.disconnect()
      }
    },
  }
}
