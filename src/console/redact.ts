import type { GatewayConfig } from '../config/types.js'

/** Keys whose string values are secrets wherever they sit in the config (hashes, credentials, API keys). */
const SECRET_KEY = /hash|secret|credential|password|authorization|api[-_]?key|postgres_url|redis_url/i
/** Shorter values are not worth hunting (they would also match ordinary words). */
const MIN_SECRET_LENGTH = 6

export const REDACTED = '[redacted]'

/**
 * The secret strings of a config: every string under a key that names a secret (`secret_hash`, `hash`,
 * `credential`, `password_hash`, header values such as `Authorization` or `X-Api-Key`, the database and Redis
 * URLs), plus `extra` (the admin bearer token, read from the environment). The console never shows them.
 */
export function secretsOf (config: GatewayConfig, extra: readonly string[] = []): string[] {
  const found = new Set<string>(extra.filter((s) => s.length >= MIN_SECRET_LENGTH))
  const walk = (value: unknown, secret: boolean): void => {
    if (typeof value === 'string') {
      if (secret && value.length >= MIN_SECRET_LENGTH) found.add(value)
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, secret)
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, secret || SECRET_KEY.test(key))
    }
  }
  walk(config, false)
  // Longest first, so a secret that contains another is replaced whole.
  return [...found].sort((a, b) => b.length - a.length)
}

/**
 * The JSON text of `value` with every secret replaced by `[redacted]`, and the user-info of any URL removed: the
 * last guard before an answer leaves the admin listener, whatever a view put in it.
 */
export function redactedJson (value: unknown, secrets: readonly string[]): string {
  let text = JSON.stringify(value)
  for (const secret of secrets) {
    const inJson = JSON.stringify(secret).slice(1, -1)
    if (text.includes(inJson)) text = text.split(inJson).join(REDACTED)
  }
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s"]+@/gi, '$1')
}
