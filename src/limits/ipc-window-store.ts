import { isMessage, type WindowAddItem, type WindowAddReply, type WindowAddRequest } from '../ipc/messages.js'
import type { WindowStore } from './synced-window-counter.js'

/** An add the primary has not answered within this time fails: the pre-count forgets, on_store_error decides. */
const ADD_TIMEOUT_MS = 1_000

interface Pending {
  resolve (results: [number, number][]): void
  reject (error: Error): void
  sentAt: number
}

const pending = new Map<number, Pending>()
let nextId = 0
let listening = false
let sweeper: NodeJS.Timeout | undefined

function onPrimaryMessage (message: unknown): void {
  if (!isMessage<WindowAddReply>(message, 'lanegate:window-add') || !Array.isArray(message.results)) return
  const waiting = pending.get(message.id)
  if (waiting === undefined) return
  pending.delete(message.id)
  waiting.resolve(message.results)
}

/** One timer for every add in flight: fails adds older than ADD_TIMEOUT_MS (the primary is gone or stuck). */
function sweepStale (): void {
  const now = Date.now()
  for (const [id, waiting] of pending) {
    if (now - waiting.sentAt < ADD_TIMEOUT_MS) continue
    pending.delete(id)
    waiting.reject(new Error('the primary process did not answer a rate-limit sync in time'))
  }
  if (pending.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

function send (adds: WindowAddItem[]): Promise<[number, number][]> {
  if (process.send === undefined || !process.connected) return Promise.reject(new Error('no IPC channel to the primary process'))
  if (!listening) {
    process.on('message', onPrimaryMessage)
    listening = true
  }
  sweeper ??= setInterval(sweepStale, ADD_TIMEOUT_MS / 4).unref()
  const id = ++nextId
  const request: WindowAddRequest = { channel: 'lanegate:window-add', id, adds }
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, sentAt: Date.now() })
    // A failed send (the primary is gone) is left to the sweep, which fails the add within ADD_TIMEOUT_MS.
    process.send?.(request, () => {})
  })
}

/**
 * The primary process as the store of a worker's pre-count (`server.workers` > 1, memory driver,
 * `rate_limit_store.sync_interval_ms` > 0): one IPC message per sync of a limit instead of one per request, the
 * primary's counter (cluster/primary-counters.ts) adding the admitted counts as Redis's script would. Its counts
 * are the ones the exact IpcCounter uses, so the over-admission bound is the Redis one (docs/performance.md).
 */
export function ipcWindowStore (limit: string, points: number, windowSeconds: number): WindowStore {
  return {
    get ready () { return process.send !== undefined && process.connected },
    add: (key, admitted) => send([[limit, points, windowSeconds, key, admitted]]).then((results) => results[0] as [number, number]),
    addMany: (entries) => send(entries.map(([key, admitted]) => [limit, points, windowSeconds, key, admitted])),
  }
}
