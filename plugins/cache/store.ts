import { LRUCache } from 'lru-cache'
import type { GatewaySettings, Refusal } from '../../src/plugin/index.js'

/** One cached answer. */
export interface CachedAnswer {
  /** The headers replayed (lower-case names), as `answer` carries them. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  /** When it was stored (ms since epoch), for `Age`. */
  readonly storedAt: number
  /** The request URL (path and query) it answered: what a write to that URL invalidates. */
  readonly url: string
  /** The policy's answer (`context.answer`: status, headers, body), built once when stored and returned on every hit. */
  readonly answer: Refusal
}

/**
 * The `cache` policy's memory for one config snapshot: answers by key, the Vary names of each primary key, and the
 * keys of each URL (every route, partition and Vary value), so that a write to a URL drops them all.
 */
export interface CacheStore {
  readonly entries: LRUCache<string, CachedAnswer>
  readonly varyNames: LRUCache<string, string[]>
  readonly keysByUrl: Map<string, Set<string>>
}

/**
 * One store per config snapshot (every route's `cache` step of that snapshot shares it), bounded by
 * `cache_store.max_bytes`: a reload builds a new snapshot, so it starts empty, and the old store goes with the old
 * snapshot once its last request is done.
 */
const stores = new WeakMap<object, CacheStore>()

export function cacheStoreOf (settings: Pick<GatewaySettings, 'cacheStoreMaxBytes'>): CacheStore {
  let store = stores.get(settings)
  if (store === undefined) {
    const keysByUrl = new Map<string, Set<string>>()
    store = {
      keysByUrl,
      entries: new LRUCache<string, CachedAnswer>({
        maxSize: settings.cacheStoreMaxBytes,
        sizeCalculation: sizeOf,
        // A stale entry is dropped when read, never served.
        ttlAutopurge: false,
        allowStale: false,
        // Each lookup reads the clock, and no timer is armed (the default 1 ms one runs per lookup).
        ttlResolution: 0,
        // Evicted, expired, replaced or invalidated: the URL index forgets the key (`putEntry` adds it back on a
        // replacement), so it never outgrows the entries.
        dispose: function forgetKey (answer, key) { unindex(keysByUrl, answer.url, key) },
      }),
      // Small (names of a few headers per URL); counted apart, bounded by count.
      varyNames: new LRUCache<string, string[]>({ max: 100_000 }),
    }
    stores.set(settings, store)
  }
  return store
}

/** Stores an answer under `key` and indexes it by its URL. */
export function putEntry (store: CacheStore, key: string, entry: CachedAnswer, ttlMs: number): void {
  store.entries.set(key, entry, { ttl: ttlMs })
  // lru-cache refuses an entry larger than its whole size (nothing stored): index only what is there.
  if (!store.entries.has(key)) return
  let keys = store.keysByUrl.get(entry.url)
  if (keys === undefined) store.keysByUrl.set(entry.url, keys = new Set())
  keys.add(key)
}

/** Drops every entry stored for `url` (path and query), whatever its route, partition or Vary values. */
export function dropUrl (store: CacheStore, url: string): void {
  const keys = store.keysByUrl.get(url)
  if (keys === undefined) return
  for (const key of [...keys]) store.entries.delete(key)
  store.keysByUrl.delete(url)
}

function unindex (keysByUrl: Map<string, Set<string>>, url: string, key: string): void {
  const keys = keysByUrl.get(url)
  if (keys === undefined) return
  keys.delete(key)
  if (keys.size === 0) keysByUrl.delete(url)
}

/** Bytes an entry holds: body, headers and key (UTF-16 in memory), plus a fixed overhead. */
function sizeOf (answer: CachedAnswer, key: string): number {
  let size = answer.body.length + key.length * 2 + 128
  for (const [name, value] of Object.entries(answer.headers)) size += (name.length + value.length) * 2
  return size
}

/** Headers that belong to one answer (or to the steps before the cache), never replayed from a stored one. */
const PER_ANSWER = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'age', 'set-cookie',
  'x-request-id', 'x-cache', 'retry-after', 'trailer', 'upgrade', 'proxy-connection'])

/** The headers of a sent answer worth replaying: not per-answer ones, not rate-limit or CORS headers of its request. */
export function storedHeaders (headers: Readonly<Record<string, string | number | string[] | undefined>>): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (value === undefined || PER_ANSWER.has(lower) || lower.startsWith('x-ratelimit-') || lower.startsWith('access-control-')) continue
    kept[lower] = Array.isArray(value) ? value.join(', ') : String(value)
  }
  return kept
}
