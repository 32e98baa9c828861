import type { Worker } from 'node:cluster'
import { isMessage, type ProberCommand, type ProbeResultMessage } from '../ipc/messages.js'
import { listenToWorkers } from './cluster-events.js'

/**
 * The primary's side of "one prober per host" (upstream/probe-sharing.ts): the listening worker with the lowest
 * id probes; its results go to every other worker, and the latest result per target and path is kept so a
 * worker that starts later (a replacement) applies them at once instead of serving on unknown health until the
 * next round. When the prober dies the next worker takes over and probes at once. Returns a function that stops.
 */
export function coordinateProbes (): () => void {
  let prober: Worker | undefined
  const latest = new Map<string, ProbeResultMessage>()
  const listening = new Set<Worker>()

  function send (worker: Worker, message: ProberCommand | ProbeResultMessage): void {
    if (worker.isConnected()) worker.send(message)
  }

  function choose (): void {
    if (prober !== undefined && listening.has(prober)) return
    const next = [...listening].sort((a, b) => a.id - b.id)[0]
    prober = next
    if (next !== undefined) send(next, { channel: 'lanegate:prober', probing: true })
  }

  function onListening (worker: Worker): void {
    listening.add(worker)
    for (const result of latest.values()) send(worker, result)
    choose()
  }

  function onExit (worker: Worker): void {
    listening.delete(worker)
    if (worker === prober) prober = undefined
    choose()
  }

  function onMessage (worker: Worker, message: unknown): void {
    if (worker !== prober || !isMessage<ProbeResultMessage>(message, 'lanegate:probe')) return
    latest.set(`${message.path}\u0000${message.url}`, message)
    for (const other of listening) if (other !== worker) send(other, message)
  }

  return listenToWorkers({ onListening, onExit, onMessage })
}
