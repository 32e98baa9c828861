import { availableParallelism } from 'node:os'

/** `server.workers` as a process count: `auto` is one per core the OS lets this process use. */
export function resolveWorkerCount (setting: number | 'auto'): number {
  return setting === 'auto' ? Math.max(1, availableParallelism()) : setting
}
