import cluster from 'node:cluster'
import { localConnectionSlots, type ConnectionSlots } from '../plugin/connection-slots.js'
import { isMessage, type SlotReply, type SlotRequest } from '../ipc/messages.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'

/*
 * Open-connection counts by key for `connection-limit` (the contract's ConnectionSlots), bounded for the host: in
 * one process a Map; in a worker of `server.workers` > 1 the primary holds the counts (serveWorkerSlots), so N
 * workers share one bound.
 */
export type { ConnectionSlots }

/** A count the primary has not answered within this time refuses the connection (never an unbounded one). */
const ACQUIRE_TIMEOUT_MS = 1_000

class IpcSlots implements ConnectionSlots {
  private readonly pending = new Map<number, (allowed: boolean) => void>()
  private nextId = 0

  constructor () {
    process.on('message', (message: unknown) => {
      if (!isMessage<SlotReply>(message, 'lanegate:slots')) return
      const answer = this.pending.get(message.id)
      this.pending.delete(message.id)
      answer?.(message.allowed)
    })
  }

  acquire (key: string, max: number): Promise<boolean> {
    if (process.send === undefined || !process.connected) return Promise.resolve(false)
    const id = ++this.nextId
    const request: SlotRequest = { channel: 'lanegate:slots', op: 'acquire', id, key, max }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return
        resolve(false)
        // The primary may still have counted it: give the place back.
        this.release(key)
      }, ACQUIRE_TIMEOUT_MS)
      this.pending.set(id, (allowed) => {
        clearTimeout(timer)
        resolve(allowed)
      })
      process.send?.(request, () => {})
    })
  }

  release (key: string): void {
    const request: SlotRequest = { channel: 'lanegate:slots', op: 'release', id: 0, key, max: 0 }
    if (process.connected) process.send?.(request, () => {})
  }
}

let slots: ConnectionSlots | undefined

/** This process's connection slots (made at first use: per process, or the primary's for a worker). */
export function connectionSlots (): ConnectionSlots {
  slots ??= isLanegateWorker() ? new IpcSlots() : localConnectionSlots()
  return slots
}

/**
 * The primary's side: one count per key for every worker; the places a worker holds are given back when it exits
 * (a crashed worker's connections are gone with it). Returns a function that stops answering.
 */
export function serveWorkerSlots (): () => void {
  const counts = localConnectionSlots()
  const held = new Map<number, Map<string, number>>()

  function onWorkerMessage (worker: import('node:cluster').Worker, message: unknown): void {
    if (!isMessage<SlotRequest>(message, 'lanegate:slots') || typeof message.key !== 'string') return
    const mine = held.get(worker.id) ?? new Map<string, number>()
    held.set(worker.id, mine)
    if (message.op === 'release') {
      const n = mine.get(message.key) ?? 0
      if (n === 0) return
      if (n === 1) mine.delete(message.key)
      else mine.set(message.key, n - 1)
      counts.release(message.key)
      return
    }
    const allowed = counts.acquire(message.key, message.max)
    if (allowed) mine.set(message.key, (mine.get(message.key) ?? 0) + 1)
    const reply: SlotReply = { channel: 'lanegate:slots', id: message.id, allowed }
    if (worker.isConnected()) worker.send(reply)
  }

  function onWorkerExit (worker: import('node:cluster').Worker): void {
    for (const [key, n] of held.get(worker.id) ?? []) for (let i = 0; i < n; i++) counts.release(key)
    held.delete(worker.id)
  }

  cluster.on('message', onWorkerMessage)
  cluster.on('exit', onWorkerExit)
  return () => {
    cluster.off('message', onWorkerMessage)
    cluster.off('exit', onWorkerExit)
  }
}
