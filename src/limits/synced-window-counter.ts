import type { ChainableCommander, Redis } from 'ioredis'
import type { CountOutcome, RequestCounter } from './request-counter.js'

/**
 * rate-limiter-flexible's RateLimiterRedis script, word for word (lib/RateLimiterRedis.js, `incrTtlLuaScript`;
 * test/unit/synced-window-counter-script.test.ts keeps the two in step): a fixed window opened by the first
 * consume (`SET key 0 EX window NX`), `INCRBY` the points, and the count and PTTL back. The same keys and the same
 * script, so gateways in exact mode (`sync_interval_ms: 0`) and in pre-count mode on one Redis count together.
 */
export const windowIncrScript = `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX') \
local consumed = redis.call('incrby', KEYS[1], ARGV[1]) \
local ttl = redis.call('pttl', KEYS[1]) \
if ttl == -1 then \
  redis.call('expire', KEYS[1], ARGV[2]) \
  ttl = 1000 * ARGV[2] \
end \
return {consumed, ttl} \
`

/** The ioredis command the script is defined as (on the client and on its pipelines). */
const COMMAND = 'lanegateWindowIncr'

type WindowIncr = (key: string, points: number, seconds: number) => Promise<[number, number]>
type WindowIncrPipeline = ChainableCommander & { [COMMAND]: (key: string, points: number, seconds: number) => unknown }
/** A client with the script `defineCommand` added: ioredis types such a command nowhere; it is there at run time. */
type WindowIncrClient = Redis & { [COMMAND]: WindowIncr }

/** What this instance knows of one key's window. */
interface KeyWindow {
  /** The key's count in Redis at the last read: every instance's requests, this one's up to its last sync. */
  global: number
  /** When the window ends (local clock: the read's arrival plus the PTTL it returned). */
  resetAt: number
  /** When the last read arrived; a count older than the counter's freshness is not admitted on. */
  readAt: number
  /** Requests admitted here and not sent yet. */
  unsent: number
  /** Requests sent in a sync whose answer has not come back. */
  inFlight: number
  /** On the list the next sync sends. */
  queued: boolean
  /** The round trip this key waits for (first request, stale count, new window); settles, never rejects. */
  pending: Promise<void> | undefined
}

/**
 * Where the shared counts live: Redis (every instance), or the primary process (every worker of one host). Both
 * answer an add with the window's count and the milliseconds left in it, opening the window at its first add.
 */
export interface WindowStore {
  /** Whether a command may be sent now (false: fail at once, the caller's on_store_error decides). */
  readonly ready: boolean
  /** Adds `points` to one key's window: `[count, msLeft]`. */
  add (key: string, points: number): Promise<[number, number]>
  /** Adds to several keys in one round trip, answers in the same order; rejects when any add failed. */
  addMany (entries: readonly (readonly [key: string, points: number])[]): Promise<[number, number][]>
}

/**
 * Redis as a WindowStore: RateLimiterRedis's own script and keys (`<keyPrefix>:<key>`), one call per key, a
 * pipeline for many.
 */
export function redisWindowStore (client: Redis, keyPrefix: string, windowSeconds: number): WindowStore {
  if (!(COMMAND in client)) client.defineCommand(COMMAND, { numberOfKeys: 1, lua: windowIncrScript })
  const redisKey = (key: string): string => `${keyPrefix}:${key}`
  return {
    get ready () { return client.status === 'ready' },
    add: (key, points) => (client as WindowIncrClient)[COMMAND](redisKey(key), points, windowSeconds),
    async addMany (entries) {
      const pipeline = client.pipeline() as WindowIncrPipeline
      for (const [key, points] of entries) pipeline[COMMAND](redisKey(key), points, windowSeconds)
      const replies = await pipeline.exec()
      if (replies === null) throw new Error('the rate-limit Redis pipeline was discarded')
      return replies.map(([error, reply]) => {
        if (error !== null) throw error
        return reply as [number, number]
      })
    },
  }
}

/** How a SyncedWindowCounter reaches its store and what it counts. */
export type SyncedWindowOptions = ({
  /** An ioredis client without an offline queue (a command while disconnected fails at once). */
  readonly client: Redis
  /** `<key_prefix>:<limit name>`: a key's Redis key is `<keyPrefix>:<key>`, as RateLimiterRedis writes it. */
  readonly keyPrefix: string
} | {
  /** Any other store (the primary process of server.workers, cluster/ipc-window-store.ts). */
  readonly store: WindowStore
}) & {
  readonly points: number
  readonly windowSeconds: number
  /** How often the local counts go to Redis and the global counts come back (> 0). */
  readonly syncIntervalMs: number
  readonly now?: () => number
}

/**
 * A fixed-window limit counted in a shared store with a local pre-count (`rate_limit_store.sync_interval_ms` > 0):
 * Redis (the instances of a cluster; INCRBY through RateLimiterRedis's own script), or the primary process (the
 * workers of `server.workers`, memory driver). The hot path answers synchronously from what this instance last
 * read, and every `syncIntervalMs` one round trip sends the counts admitted since and reads each key's global
 * count and time left back. A request is admitted while `global + inFlight + unsent < points`.
 *
 * A key's request goes to Redis itself (a promise, as in exact mode; it is counted there at once) when this
 * instance holds no count it may admit on: the key is new here, its window ended, or its count was read more than
 * two intervals ago (a key asked less often than that is counted exactly). Refusals need no fresh count: a
 * window's count only grows, so a key at its limit is refused locally until the window ends.
 *
 * Over-admission in one window (docs/performance.md, "Scale-out"): no instance admits more than `points` by
 * itself; beyond `points`, the total grows by at most what each other pre-counting instance admits in a span of
 * three intervals plus a round trip.
 *
 * A store failure is never a 429 (D4): a failed sync forgets every key (the counts it carried are dropped: a
 * timed-out INCRBY may have been applied, and sending it again could refuse requests nobody made), so every
 * request goes to Redis and fails like exact mode's (`on_store_error`) until Redis answers again.
 */
export class SyncedWindowCounter implements RequestCounter {
  readonly points: number
  readonly #store: WindowStore
  readonly #windowMs: number
  readonly #freshForMs: number
  readonly #now: () => number
  readonly #windows = new Map<string, KeyWindow>()
  #queue: string[] = []
  #nextSweepAt: number
  #timer: NodeJS.Timeout | undefined

  constructor (options: SyncedWindowOptions) {
    this.points = options.points
    this.#store = 'store' in options ? options.store : redisWindowStore(options.client, options.keyPrefix, options.windowSeconds)
    this.#windowMs = options.windowSeconds * 1000
    this.#freshForMs = 2 * options.syncIntervalMs
    this.#now = options.now ?? Date.now
    this.#nextSweepAt = this.#now() + this.#windowMs
    this.#timer = setInterval(() => { void this.sync() }, options.syncIntervalMs)
    this.#timer.unref()
  }

  count (key: string): CountOutcome | Promise<CountOutcome> {
    const now = this.#now()
    const window = this.#windows.get(key)
    if (window !== undefined && window.pending === undefined && window.resetAt > now && this.#store.ready) {
      const counted = window.global + window.inFlight + window.unsent
      if (counted >= this.points) return { allowed: false, remaining: 0, msBeforeReset: window.resetAt - now }
      if (now - window.readAt <= this.#freshForMs) {
        if (!window.queued) {
          window.queued = true
          this.#queue.push(key)
        }
        window.unsent++
        return { allowed: true, remaining: this.points - counted - 1, msBeforeReset: window.resetAt - now }
      }
    }
    return this.#countInStore(key, window, now)
  }

  /** Keys this instance holds a window for (for tests and the memory bound). */
  get size (): number {
    return this.#windows.size
  }

  /**
   * Sends the counts admitted since the last sync (one pipeline, one script call per key) and reads the global
   * counts back; sweeps ended windows once per window length. Never rejects: a failure forgets every key.
   */
  async sync (): Promise<void> {
    const now = this.#now()
    if (now >= this.#nextSweepAt) this.#sweep(now)
    if (this.#queue.length === 0) return
    const keys = this.#queue
    this.#queue = []
    const sent: { window: KeyWindow, points: number }[] = []
    const entries: [string, number][] = []
    for (const key of keys) {
      const window = this.#windows.get(key)
      if (window === undefined) continue
      window.queued = false
      // A window that ended takes its unsent counts with it: sent now, they would open the next one.
      if (window.resetAt <= now || window.unsent === 0) {
        window.unsent = 0
        continue
      }
      entries.push([key, window.unsent])
      sent.push({ window, points: window.unsent })
      window.inFlight += window.unsent
      window.unsent = 0
    }
    if (sent.length === 0) return
    if (!this.#store.ready) {
      this.#forget()
      return
    }
    try {
      const replies = await this.#store.addMany(entries)
      const readAt = this.#now()
      replies.forEach((reply, i) => {
        const { window, points } = sent[i] as { window: KeyWindow, points: number }
        window.inFlight -= points
        this.#read(window, reply, readAt)
      })
    } catch {
      this.#forget()
    }
  }

  /** Stops the timer and sends what is left (best effort: a failure is dropped, as in a failed sync). */
  async close (): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.sync()
  }

  /** One request counted in Redis itself; later requests of the key wait for it, then count locally. */
  #countInStore (key: string, known: KeyWindow | undefined, now: number): Promise<CountOutcome> {
    // As RateLimiterRedis's rejectIfRedisNotReady: no command while disconnected, the caller's on_store_error decides.
    if (!this.#store.ready) throw new Error('the rate-limit store is not connected')
    if (known?.pending !== undefined) {
      return known.pending.then(() => this.count(key))
    }
    const window = known !== undefined && known.resetAt > now
      ? known
      : { global: 0, resetAt: 0, readAt: 0, unsent: 0, inFlight: 0, queued: false, pending: undefined }
    this.#windows.set(key, window)
    const counted = this.#store.add(key, 1).then(
      (reply) => {
        window.pending = undefined
        this.#read(window, reply, this.#now())
        const total = window.global + window.inFlight + window.unsent
        const allowed = total <= this.points
        return { allowed, remaining: allowed ? this.points - total : 0, msBeforeReset: window.resetAt - this.#now() }
      },
      (error: unknown) => {
        window.pending = undefined
        this.#forget()
        throw error
      },
    )
    window.pending = counted.then(settled, settled)
    return counted
  }

  #read (window: KeyWindow, [consumed, pttl]: [number, number], readAt: number): void {
    window.global = Number(consumed)
    window.resetAt = readAt + Number(pttl)
    window.readAt = readAt
  }

  /** After a store failure: no count is trusted and none is kept. */
  #forget (): void {
    this.#windows.clear()
    this.#queue = []
  }

  /** Drops windows that ended, and counts too old to admit on for keys not at their limit (both idle here). */
  #sweep (now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.pending !== undefined || window.unsent > 0 || window.inFlight > 0) continue
      const stale = now - window.readAt > this.#freshForMs && window.global < this.points
      if (window.resetAt <= now || stale) this.#windows.delete(key)
    }
    this.#nextSweepAt = now + this.#windowMs
  }
}

function settled (): void {}
