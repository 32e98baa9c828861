/** Runs at most `max` tasks at once; the rest wait in FIFO order. */
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>

export function createLimiter (max: number): Limiter {
  let running = 0
  const waiting: (() => void)[] = []
  return async function limited<T> (task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next waiter, so `running` never exceeds `max`.
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next !== undefined) next()
      else running--
    }
  }
}
