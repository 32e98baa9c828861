/** Why a config-store operation failed, for the CLI's exit codes and the admin listener's statuses. */
export type ConfigStoreErrorCode = 'conflict' | 'not_found' | 'unreachable' | 'empty'

/**
 * A config-store failure a caller can act on: `conflict` (the head moved past `--if-version` / `If-Match`),
 * `not_found` (no such version), `unreachable` (PostgreSQL did not answer), `empty` (no version pushed yet).
 */
export class ConfigStoreError extends Error {
  readonly code: ConfigStoreErrorCode
  /** With `conflict`: the head the push found. */
  readonly head: number | undefined

  constructor (code: ConfigStoreErrorCode, message: string, head?: number) {
    super(message)
    this.name = 'ConfigStoreError'
    this.code = code
    this.head = head
  }
}

/** A PostgreSQL failure to connect or to answer, as an `unreachable` error naming the store (never its password). */
export function unreachable (url: string, error: unknown): ConfigStoreError {
  if (error instanceof ConfigStoreError) return error
  return new ConfigStoreError('unreachable', `config store ${redactUrl(url)} unreachable: ${(error as Error).message}`)
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
