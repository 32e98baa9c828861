import cluster, { type Worker } from 'node:cluster'

/** What the primary's coordinators (probes, breakers) hear of the workers. */
export interface WorkerHandlers {
  onListening (worker: Worker): void
  onExit (worker: Worker): void
  onMessage (worker: Worker, message: unknown): void
}

/** Registers the handlers on node:cluster; returns the function that removes them. */
export function listenToWorkers (handlers: WorkerHandlers): () => void {
  const { onListening, onExit, onMessage } = handlers
  cluster.on('listening', onListening)
  cluster.on('exit', onExit)
  cluster.on('message', onMessage)
  return () => {
    cluster.off('listening', onListening)
    cluster.off('exit', onExit)
    cluster.off('message', onMessage)
  }
}
