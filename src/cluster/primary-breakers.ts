import type { Worker } from 'node:cluster'
import { isMessage, type CircuitMessage } from '../ipc/messages.js'
import { listenToWorkers } from './cluster-events.js'

/**
 * The primary's side of shared circuit breakers (upstream/breaker-sharing.ts): a worker's opening or closing goes
 * to every other worker; the latest per upstream and target is kept while it is an opening that has not ended,
 * so a worker that starts later (a replacement) keeps the failing target out at once. Returns a function that stops.
 */
export function coordinateBreakers (): () => void {
  const latest = new Map<string, CircuitMessage>()
  const listening = new Set<Worker>()

  function onListening (worker: Worker): void {
    listening.add(worker)
    const now = Date.now()
    for (const [key, message] of latest) {
      if (message.until <= now) latest.delete(key)
      else if (worker.isConnected()) worker.send(message)
    }
  }

  function onExit (worker: Worker): void {
    listening.delete(worker)
  }

  function onMessage (worker: Worker, message: unknown): void {
    if (!isMessage<CircuitMessage>(message, 'lanegate:circuit')) return
    const key = `${message.upstream}\u0000${message.url}`
    if (message.to === 'open') latest.set(key, message)
    else latest.delete(key)
    for (const other of listening) if (other !== worker && other.isConnected()) other.send(message)
  }

  return listenToWorkers({ onListening, onExit, onMessage })
}
