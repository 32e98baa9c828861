import { once } from 'node:events'
import type { EventEmitter } from 'node:events'

/**
 * How long a wait may take before it fails. Generous on purpose: a wait returns as soon as its condition holds,
 * so the deadline only matters when something is broken, and a loaded CI machine is slow (2 cores beside
 * stress-ng and other suites: a gateway's boot, ~1 s of CPU, took 10–20 s of wall time there).
 */
export const WAIT_TIMEOUT_MS = 30_000

export interface WaitOptions {
  /** What is waited for, in words: the failure message names it ("timed out after 15000 ms waiting for …"). */
  what: string
  /** Deadline (default {@link WAIT_TIMEOUT_MS}). */
  timeoutMs?: number
  /** Pause between two checks (default 10 ms). */
  intervalMs?: number
}

type Met<T> = Exclude<T, false | undefined | null | 0 | ''>

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Checks `condition` until it returns a truthy value, and resolves with that value; rejects once `timeoutMs`
 * have passed, naming `what` and the last error the check threw (a check that throws, e.g. a fetch to a port
 * that does not answer yet, counts as not met).
 */
export async function waitFor<T> (condition: () => T | Promise<T>, options: WaitOptions): Promise<Met<T>> {
  const timeoutMs = options.timeoutMs ?? WAIT_TIMEOUT_MS
  const end = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await condition()
      if (value) return value as Met<T>
    } catch (err) {
      lastError = err
    }
    if (Date.now() >= end) {
      const cause = lastError === undefined ? '' : ` (last check threw: ${String(lastError)})`
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what}${cause}`)
    }
    await pause(options.intervalMs ?? 10)
  }
}

/**
 * `waitFor` as a yes/no answer, for `t.ok(await until(...), 'message')`: true once `check` holds, false when
 * `ms` pass first.
 */
export async function until (check: () => boolean | Promise<boolean>, ms = WAIT_TIMEOUT_MS): Promise<boolean> {
  return waitFor(check, { what: 'a condition', timeoutMs: ms }).then(() => true, () => false)
}

/**
 * Resolves with the arguments of `emitter`'s next `event` (node's `events.once`), or rejects after `timeoutMs`
 * naming `what`. An `error` event rejects, as with `events.once`.
 */
export async function waitForEvent (emitter: EventEmitter, event: string, options: Omit<WaitOptions, 'intervalMs'>): Promise<unknown[]> {
  const timeoutMs = options.timeoutMs ?? WAIT_TIMEOUT_MS
  try {
    return await once(emitter, event, { signal: AbortSignal.timeout(timeoutMs) })
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what}`)
    throw err
  }
}

/**
 * Resolves once text matching `pattern` appears in `read()` after offset `from` (e.g. a spawned gateway's
 * `output`), with the match; rejects after the deadline naming `what` and the tail of what was read.
 */
export async function waitForText (read: () => string, pattern: RegExp | string, options: WaitOptions & { from?: number }): Promise<string> {
  const matches = (): string | undefined => {
    const text = read().slice(options.from ?? 0)
    if (typeof pattern === 'string') return text.includes(pattern) ? pattern : undefined
    return pattern.exec(text)?.[0]
  }
  try {
    return await waitFor(matches, options)
  } catch (err) {
    throw new Error(`${(err as Error).message}; output ends with: ${read().slice(-400)}`)
  }
}

/**
 * A process's exit code once it exits, or `'running'` if it has not after `ms` (`ms = 0`: has it exited already?).
 * For a deadline ("exits within 10 × its timeout") or an absence ("still running after a stop-less signal").
 */
export async function exitWithin (exited: Promise<number | null>, ms: number): Promise<number | null | 'running'> {
  let timer: NodeJS.Timeout | undefined
  const running = new Promise<'running'>((resolve) => { timer = setTimeout(() => resolve('running'), ms) })
  try {
    return await Promise.race([exited, running])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Lets `ms` of wall-clock time pass. Only for tests about time itself (a window expiring, a grace period, a
 * process that must keep running): say why at the call, and make `ms` relative to the configured time.
 */
export const letTimePass = pause
