/**
 * A key whose own string value is a secret (hashes, credentials, passwords, header values such as `Authorization`,
 * `X-Api-Key`, `X-Auth-Token` or `Cookie`, the database and Redis URLs). Only the key a string sits under decides:
 * a `created` date beside a `hash` under `secrets` is not a secret, nor an `api-key` policy's `header: X-Api-Key`,
 * nor `token_env` (the name of a variable).
 */
const SECRET_KEY = /hash|secret|credential|password|authorization|api[-_]?key|postgres_url|redis_url|(^|[-_])token$|^cookie$/i
/** Shorter values are not worth hunting (they would also match ordinary words). */
const MIN_SECRET_LENGTH = 6

export const REDACTED = '[redacted]'

/**
 * The secret strings of a config, by where they sit: every string whose own key names a secret (`hash` of a
 * `secrets` or `api_keys` entry, `credential`, `password_hash`, a `headers` value set under `Authorization` or
 * `X-Api-Key`, `postgres_url`, `redis_url`; a list's strings take the list's key), plus `extra` (the admin bearer
 * token, read from the environment). The other fields of an object holding a secret (a secret's `created`
 * date) are ordinary values. The console never shows these strings.
 */
export function secretsOf (config: unknown, extra: readonly string[] = []): string[] {
  const found = new Set<string>(extra.filter((s) => s.length >= MIN_SECRET_LENGTH))
  const walk = (value: unknown, key: string): void => {
    if (typeof value === 'string') {
      if (SECRET_KEY.test(key) && value.length >= MIN_SECRET_LENGTH) found.add(value)
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, key)
    } else if (typeof value === 'object' && value !== null) {
      for (const [name, item] of Object.entries(value)) walk(item, name)
    }
  }
  walk(config, '')
  // Longest first, so a secret that contains another is replaced whole.
  return [...found].sort((a, b) => b.length - a.length)
}

/**
 * The JSON text of `value` with every secret value replaced by `[redacted]` wherever a view put it (a reload
 * problem quoting a credential included), and the user-info of any URL removed: the last guard before an answer
 * leaves the admin listener. Only the values `secretsOf` found are replaced, so no ordinary field is touched.
 */
export function redactedJson (value: unknown, secrets: readonly string[]): string {
  return redactedText(JSON.stringify(value), secrets.map((secret) => JSON.stringify(secret).slice(1, -1)))
}

/** `text` with each of `secrets` replaced by `[redacted]` and the user-info of any URL removed (a YAML diff, say). */
export function redactedText (text: string, secrets: readonly string[]): string {
  let redacted = text
  for (const secret of secrets) {
    if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED)
  }
  return redacted.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s"]+@/gi, '$1')
}
