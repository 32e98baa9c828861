/** A look that runs one at a time, every `everyMs` and whenever asked; a look asked for meanwhile runs right after. */
export interface SerialPoll {
  /** Looks now (or right after the look running now). */
  now (): void
  /** Stops the timer and waits for the look running now. */
  stop (): Promise<void>
}

export function serialPoll (look: () => Promise<void>, everyMs: number): SerialPoll {
  let running: Promise<void> | undefined
  let again = false
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  function now (): void {
    if (stopped) return
    if (running !== undefined) {
      again = true
      return
    }
    clearTimeout(timer)
    running = look().finally(() => {
      running = undefined
      if (stopped) return
      if (again) {
        again = false
        now()
      } else {
        timer = setTimeout(now, everyMs)
        timer.unref()
      }
    })
  }

  return {
    now,
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
