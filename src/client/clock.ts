/**
 * Time as the client sees it. Injectable so tests of the retry rules (waits of 1 s to 60 s) run at once: a fake
 * clock records the waits and advances `now()` instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now (): number
  /** Resolves after `ms`; rejects with the signal's reason as soon as `signal` aborts. */
  sleep (ms: number, signal?: AbortSignal): Promise<void>
}

/** The real clock: `Date.now()` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: function sleep (ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason)
        return
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', aborted, { once: true })
      function done (): void {
        signal?.removeEventListener('abort', aborted)
        resolve()
      }
      function aborted (): void {
        clearTimeout(timer)
        reject(signal?.reason)
      }
    })
  },
}

/** Settles like `promise`, or rejects with the signal's reason as soon as `signal` aborts (without stopping it). */
export function raceAbort<T> (promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const aborted = (): void => reject(signal.reason)
    signal.addEventListener('abort', aborted, { once: true })
    promise.then((value) => {
      signal.removeEventListener('abort', aborted)
      resolve(value)
    }, (error: unknown) => {
      signal.removeEventListener('abort', aborted)
      reject(error)
    })
  })
}
