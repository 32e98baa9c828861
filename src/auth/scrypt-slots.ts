/**
 * The scrypt runs of first-seen keys: `maxConcurrent` at once, `maxQueued` more waiting; a caller that finds both
 * full is answered `busy` without any scrypt work, so a flood of distinct wrong keys takes at most `maxConcurrent`
 * threads of libuv's pool.
 */
export class ScryptSlots {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor (private readonly maxConcurrent: number, private readonly maxQueued: number) {}

  /** Whether every run is taken and the queue is full. */
  full (): boolean {
    return this.running >= this.maxConcurrent && this.waiting.length >= this.maxQueued
  }

  /** Resolves when one of the slots is this caller's (the caller checked `full()` first). */
  acquire (): Promise<void> | undefined {
    if (this.running < this.maxConcurrent) {
      this.running++
      return undefined
    }
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  /** Hands the slot to the next waiting key, or frees it. */
  release (): void {
    const next = this.waiting.shift()
    if (next === undefined) this.running--
    else next()
  }
}
