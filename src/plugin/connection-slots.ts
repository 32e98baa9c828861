/**
 * Open-connection counts by key, held for the host (`context.connectionSlots`): for policies that bound connections
 * rather than requests (`connection-limit`). `acquire` answers whether the connection may open and takes its place
 * (synchronously in one process, a promise when the primary of `server.workers` holds the counts); `release`
 * gives the place back once the connection ended.
 */
export interface ConnectionSlots {
  acquire (key: string, max: number): boolean | Promise<boolean>
  release (key: string): void
}

/** ConnectionSlots answered in this process: synchronously. */
export interface LocalConnectionSlots extends ConnectionSlots {
  acquire (key: string, max: number): boolean
}

/** Counts in this process alone (one gateway process, and the testing harness). */
export function localConnectionSlots (): LocalConnectionSlots {
  const open = new Map<string, number>()
  return {
    acquire (key: string, max: number): boolean {
      const count = open.get(key) ?? 0
      if (count >= max) return false
      open.set(key, count + 1)
      return true
    },
    release (key: string): void {
      const left = (open.get(key) ?? 1) - 1
      if (left <= 0) open.delete(key)
      else open.set(key, left)
    },
  }
}
