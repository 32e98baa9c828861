import cluster, { type Worker } from 'node:cluster'
import { MemoryWindowCounter, type KeyState } from '../limits/request-counter.js'
import { isMessage, type CountOutcomeItem, type CountReply, type CountRequest, type WindowAddReply, type WindowAddRequest } from '../ipc/messages.js'

/** The counters the primary keeps for its workers (the console lists their keys closest to the limit). */
let served: ReadonlyMap<string, MemoryWindowCounter> | undefined

/**
 * The `n` keys closest to limit `limit` with these settings, as the primary counts them for every worker
 * (memory driver); undefined when this process counts nothing for workers.
 */
export function primaryLimitKeys (limit: string, points: number, windowSeconds: number, n: number): KeyState[] | undefined {
  if (served === undefined) return undefined
  return served.get(`${limit}\u0000${points}/${windowSeconds}`)?.closest(n) ?? []
}

/**
 * The primary's side of IpcCounter and of the workers' pre-counts (limits/ipc-window-store.ts): one
 * MemoryWindowCounter per limit name and settings, answering every worker's counts and adds, so the workers share one count per limit and key. Counts outlive a crashed worker. Returns a
 * function that stops answering.
 */
export function serveWorkerCounters (): () => void {
  const counters = new Map<string, MemoryWindowCounter>()
  served = counters

  /**
   * The counter of one limit. Keyed by settings too: while a reload rolls through the workers, old and new settings
   * count apart, and a changed limit starts afresh (as a reload does with one process). Exact counts and
   * pre-counted adds of the same limit share it.
   */
  function counterOf (limit: string, points: number, windowSeconds: number): MemoryWindowCounter {
    const name = `${limit}\u0000${points}/${windowSeconds}`
    let counter = counters.get(name)
    if (counter === undefined) {
      counter = new MemoryWindowCounter(points, windowSeconds)
      counters.set(name, counter)
    }
    return counter
  }

  function onWorkerMessage (worker: Worker, message: unknown): void {
    if (isMessage<WindowAddRequest>(message, 'lanegate:window-add') && Array.isArray(message.adds)) {
      const results = message.adds.map(([limit, points, windowSeconds, key, admitted]) => counterOf(limit, points, windowSeconds).add(key, admitted))
      const reply: WindowAddReply = { channel: 'lanegate:window-add', id: message.id, results }
      if (worker.isConnected()) worker.send(reply)
      return
    }
    if (!isMessage<CountRequest>(message, 'lanegate:count') || !Array.isArray(message.counts)) return
    const outcomes: CountOutcomeItem[] = []
    for (const [id, limit, points, windowSeconds, key] of message.counts) {
      const outcome = counterOf(limit, points, windowSeconds).count(key)
      outcomes.push([id, outcome.allowed ? 1 : 0, outcome.remaining, outcome.msBeforeReset])
    }
    const reply: CountReply = { channel: 'lanegate:count', outcomes }
    if (worker.isConnected()) worker.send(reply)
  }

  cluster.on('message', onWorkerMessage)
  return () => { cluster.off('message', onWorkerMessage) }
}
