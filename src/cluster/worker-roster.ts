import cluster, { type Worker } from 'node:cluster'

/** A worker process alive now, and whether it serves yet (its public listener is open). */
export interface RosterEntry {
  worker: Worker
  serving: boolean
}

/**
 * The primary's view of its workers for the admin listener: which are alive (`cluster.workers`) and which of
 * them serve (a worker counts from its `listening` event: before that it is still booting and has nothing to
 * report). `configured` is `server.workers`, so a worker that died and awaits its restart shows as missing.
 */
export class WorkerRoster {
  readonly #serving = new Set<number>()

  constructor (readonly configured: number) {
    cluster.on('listening', (worker: Worker) => { this.#serving.add(worker.id) })
    cluster.on('exit', (worker: Worker) => { this.#serving.delete(worker.id) })
  }

  /** The live workers in start order (cluster ids grow with each fork). */
  entries (): RosterEntry[] {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
    return workers.sort((a, b) => a.id - b.id).map((worker) => ({ worker, serving: this.#serving.has(worker.id) }))
  }

  /** The live workers that serve. */
  serving (): Worker[] {
    return this.entries().filter((e) => e.serving).map((e) => e.worker)
  }
}
