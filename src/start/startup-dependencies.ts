import { setTimeout as sleep } from 'node:timers/promises'

/**
 * A dependency (PostgreSQL, the rate-limit Redis) that could not be reached within `server.startup_timeout_ms`.
 * Its message is the one line `lanegate start` prints before exiting 1; it names the dependency and its address
 * (never credentials from the URL).
 */
export class StartupDependencyError extends Error {
  constructor (readonly dependency: string, readonly address: string, timeoutMs: number, cause: unknown) {
    super(`cannot start: ${dependency} at ${address} not reachable within server.startup_timeout_ms (${timeoutMs} ms): ${describe(cause)}`, { cause })
    this.name = 'StartupDependencyError'
  }
}

function describe (error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0])
  if (error instanceof Error) return error.message.split('\n')[0] || error.name
  return String(error)
}

/** `host:port` of a connection URL, without user or password; the URL as given when it does not parse. */
export function addressOf (url: string | undefined): string {
  if (url === undefined) return '(no URL)'
  try {
    const parsed = new URL(url)
    return parsed.port === '' ? parsed.hostname : `${parsed.hostname}:${parsed.port}`
  } catch {
    return '(unparsable URL)'
  }
}

/**
 * `promise`, or a rejection once `deadline` passes: a connection attempt to a host that drops packets would
 * otherwise wait for the system's TCP timeout (minutes). The abandoned attempt may still hold a socket; a failed
 * start exits the process anyway (cli.ts).
 */
class DeadlineError extends Error {}

function withinDeadline<T> (promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineError('no answer before the deadline')), Math.max(1, deadline - Date.now()))
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Runs `attempt` until it succeeds or `deadline` (a Date.now() value) passes, backing off from 100 ms to 2 s
 * between attempts, so a database or Redis that comes up a few seconds after the gateway (compose, Kubernetes)
 * does not fail the start. `attempt` gets the time left, for its own timeouts. Throws StartupDependencyError
 * with the last failure once time is up.
 */
export async function retryUntilDeadline<T> (
  what: { dependency: string, address: string, timeoutMs: number, deadline: number },
  attempt: (msLeft: number) => Promise<T>,
  onRetry?: (error: unknown, delayMs: number) => void,
): Promise<T> {
  let delay = 100
  let lastFailure: unknown
  for (;;) {
    try {
      return await withinDeadline(attempt(Math.max(1, what.deadline - Date.now())), what.deadline)
    } catch (error) {
      // A last attempt cut short by the deadline says less than the failure before it (ECONNREFUSED, …).
      lastFailure = error instanceof DeadlineError && lastFailure !== undefined ? lastFailure : error
      const left = what.deadline - Date.now()
      if (left <= 0) throw new StartupDependencyError(what.dependency, what.address, what.timeoutMs, lastFailure)
      const wait = Math.min(delay, left)
      onRetry?.(error, wait)
      await sleep(wait)
      delay = Math.min(delay * 2, 2_000)
    }
  }
}
