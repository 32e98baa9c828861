import cluster from 'node:cluster'

/** Set by lanegate's primary in the environment of every worker it forks (`server.workers` > 1). */
export const WORKER_MARKER = 'LANEGATE_WORKER'

/**
 * Whether this process is a worker of lanegate's own primary. `cluster.isWorker` alone is also true under another
 * cluster manager (pm2's cluster mode forks with node:cluster too): such a process has no lanegate primary to
 * count its limits, serve its admin port or pass it reloads, so it must run as a single gateway of its own.
 */
export function isLanegateWorker (): boolean {
  return cluster.isWorker && process.env[WORKER_MARKER] === '1'
}
