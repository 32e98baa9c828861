import type { CountOutcome, RequestCounter } from './request-counter.js'
import { isMessage, type CountItem, type CountReply, type CountRequest } from '../ipc/messages.js'

/** A count the primary has not answered within this time fails, which the route maps to `on_store_error`. */
const COUNT_TIMEOUT_MS = 1_000

interface Pending {
  resolve (outcome: CountOutcome): void
  reject (error: Error): void
  sentAt: number
}

const pending = new Map<number, Pending>()
let nextId = 0
let listening = false
let sweeper: NodeJS.Timeout | undefined
/** Counts asked for in this turn of the event loop, sent together by `flush`. */
let queued: CountItem[] = []

function onPrimaryMessage (message: unknown): void {
  if (!isMessage<CountReply>(message, 'lanegate:count') || !Array.isArray(message.outcomes)) return
  for (const [id, allowed, remaining, msBeforeReset] of message.outcomes) {
    const waiting = pending.get(id)
    if (waiting === undefined) continue
    pending.delete(id)
    waiting.resolve({ allowed: allowed === 1, remaining, msBeforeReset })
  }
}

function flush (): void {
  const counts = queued
  queued = []
  const request: CountRequest = { channel: 'lanegate:count', counts }
  process.send?.(request, ignoreSendError)
}

/** A failed send (the primary is gone) is left to the sweep, which fails the count within COUNT_TIMEOUT_MS. */
function ignoreSendError (): void {}

/** One timer for every count in flight (not one per request): fails counts older than COUNT_TIMEOUT_MS. */
function sweepStale (): void {
  const now = Date.now()
  for (const [id, waiting] of pending) {
    if (now - waiting.sentAt < COUNT_TIMEOUT_MS) continue
    pending.delete(id)
    waiting.reject(new Error('the primary process did not answer a rate-limit count in time'))
  }
  if (pending.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

/**
 * A route limit counted by the primary process for every worker (`server.workers` > 1 with the memory driver),
 * so N workers share one count: 100 per minute is 100 in total, not N × 100. Each count is one IPC round trip, a
 * promise (the chain awaits it, as it does Redis); the primary answers from its MemoryWindowCounter, so the
 * semantics are those of one process. The counts of one event-loop turn travel in one message (`flush`): under
 * load a worker parses many requests per turn, and one IPC message per count cost about as much CPU as the
 * request itself.
 */
export class IpcCounter implements RequestCounter {
  constructor (readonly limit: string, readonly points: number, readonly windowSeconds: number) {}

  count (key: string): Promise<CountOutcome> {
    if (process.send === undefined || !process.connected) return Promise.reject(new Error('no IPC channel to the primary process'))
    if (!listening) {
      process.on('message', onPrimaryMessage)
      listening = true
    }
    sweeper ??= setInterval(sweepStale, COUNT_TIMEOUT_MS / 4).unref()
    const id = ++nextId
    if (queued.length === 0) setImmediate(flush)
    queued.push([id, this.limit, this.points, this.windowSeconds, key])
    return new Promise<CountOutcome>((resolve, reject) => {
      pending.set(id, { resolve, reject, sentAt: Date.now() })
    })
  }
}
