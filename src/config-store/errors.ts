/** Why a config-store operation failed, for the CLI's exit codes and the admin listener's statuses. */
export type ConfigStoreErrorCode = 'conflict' | 'not_found' | 'unreachable' | 'failed' | 'empty'

/**
 * A config-store failure a caller can act on: `conflict` (the head moved past `--if-version` / `If-Match`),
 * `not_found` (no such version), `unreachable` (PostgreSQL did not answer), `failed` (it answered with an error: a
 * permission, a schema; its SQLSTATE in `sqlstate`), `empty` (no version pushed yet).
 */
export class ConfigStoreError extends Error {
  readonly code: ConfigStoreErrorCode
  /** With `conflict`: the head the push found. */
  readonly head: number | undefined
  /** With `failed`: PostgreSQL's error code (42501: no permission). */
  readonly sqlstate: string | undefined

  constructor (code: ConfigStoreErrorCode, message: string, head?: number, sqlstate?: string) {
    super(message)
    this.name = 'ConfigStoreError'
    this.code = code
    this.head = head
    this.sqlstate = sqlstate
  }
}

/**
 * A PostgreSQL failure as an error naming the store (never its password): `failed` when the server answered with an
 * error of its own (it carries a SQLSTATE: a missing permission, a schema it cannot create), else `unreachable` (it
 * could not be connected to, or stopped answering).
 */
export function storeFailure (url: string, error: unknown): ConfigStoreError {
  if (error instanceof ConfigStoreError) return error
  const sqlstate = sqlstateOf(error)
  if (sqlstate !== undefined) {
    return new ConfigStoreError('failed', `config store ${redactUrl(url)} answered with an error: ${(error as Error).message} (SQLSTATE ${sqlstate})`, undefined, sqlstate)
  }
  return new ConfigStoreError('unreachable', `config store ${redactUrl(url)} unreachable: ${(error as Error).message}`)
}

/**
 * SQLSTATE classes that say the server is going away or cannot take the connection now (08 connection exception, 53
 * insufficient resources such as too many connections, 57 operator intervention such as a shutdown, 58 system
 * error): passing, so "unreachable" like a refused socket, not "failed".
 */
const PASSING_CLASSES = new Set(['08', '53', '57', '58'])

/**
 * The SQLSTATE of an error PostgreSQL sent (pg's DatabaseError) that retrying will not cure; undefined for a socket
 * or client error, or one of the passing classes.
 */
function sqlstateOf (error: unknown): string | undefined {
  if (!(error instanceof Error) || !('severity' in error) || !('code' in error)) return undefined
  if (typeof error.code !== 'string' || !/^[0-9A-Z]{5}$/.test(error.code)) return undefined
  return PASSING_CLASSES.has(error.code.slice(0, 2)) ? undefined : error.code
}

/** The store URL without its password, for messages and logs. */
export function redactUrl (url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparsable URL)'
  }
}
