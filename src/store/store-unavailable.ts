import { GatewayError } from '../plugin/gateway-error.js'
import type { Store } from './store.js'

/** The Retry-After (seconds) a request refused because the database is unavailable is answered with. */
export const STORE_RETRY_AFTER_SECONDS = 2

/** Node socket errors meaning the database could not be reached or the connection broke. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/** SQLite result codes of a database that cannot be used now (locked, I/O, disk full), not of a bad statement. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)/

/** Messages of node-postgres when a connection ends or cannot be had (they carry no code). */
const PG_MESSAGES = /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Client was closed|Cannot use a pool after calling end/

/**
 * Whether `error` says the database is unavailable (down, restarting, unreachable, locked), as opposed to a
 * statement the database refused: SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57P
 * (operator intervention: shut down, starting up), node socket errors, and node-postgres's connection messages.
 */
export function isStoreUnavailable (error: unknown): boolean {
  const e = error as { code?: unknown, message?: unknown } | undefined
  const code = typeof e?.code === 'string' ? e.code : ''
  if (SOCKET_CODES.has(code) || /^(08|53|57P)/.test(code) || SQLITE_UNAVAILABLE.test(code)) return true
  return typeof e?.message === 'string' && PG_MESSAGES.test(e.message)
}

/** The error a request gets when the database is unavailable: 503 `store_unavailable` with Retry-After. */
export function storeUnavailable (cause: unknown): GatewayError {
  return new GatewayError('store_unavailable', { headers: { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) }, cause })
}

type AnyMethod = (...args: unknown[]) => unknown

/** `target` with each method's unavailable-database failures turned into `storeUnavailable` (sync or async). */
function guardMethods<T extends object> (target: T): T {
  const guarded: Record<string, unknown> = {}
  for (const name of Object.keys(target)) {
    const value = (target as Record<string, unknown>)[name]
    if (typeof value !== 'function') {
      guarded[name] = value
      continue
    }
    const method = value as AnyMethod
    guarded[name] = function guardedStoreMethod (...args: unknown[]): unknown {
      let result: unknown
      try {
        result = method.apply(target, args)
      } catch (error) {
        throw isStoreUnavailable(error) ? storeUnavailable(error) : error
      }
      if (result instanceof Promise) {
        return result.catch((error: unknown) => { throw isStoreUnavailable(error) ? storeUnavailable(error) : error })
      }
      return result
    }
  }
  return guarded as T
}

/**
 * The store with every sub-store's failures of an unavailable database rendered as that request's 503 (never
 * a 500, never the end of the process). `ping` and `close` keep their raw errors: readiness reports
 * the cause, and closing is not a request.
 */
export function guardStore (store: Store): Store {
  return {
    driver: store.driver,
    payments: guardMethods(store.payments),
    idempotency: guardMethods(store.idempotency),
    dispatches: guardMethods(store.dispatches),
    ping: () => store.ping(),
    close: () => store.close(),
  }
}
