import { parse as parseScalar } from 'yaml'
import type { ConfigProblem } from './config-error.js'
import { formatPath } from './config-error.js'

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g
const WHOLE_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string value. A value that is one reference and nothing
 * else is re-read as a YAML scalar, so `port: ${PORT:-8080}` stays a number. An unset variable without a
 * default is a problem (the gateway must not start with an empty secret or URL).
 */
export function substituteEnv (value: unknown, env: NodeJS.ProcessEnv, problems: ConfigProblem[],
  path: (string | number)[] = []): unknown {
  if (typeof value === 'string') return substituteString(value, env, problems, path)
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, env, problems, [...path, i]))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = substituteEnv(item, env, problems, [...path, key])
    return out
  }
  return value
}

function substituteString (value: string, env: NodeJS.ProcessEnv, problems: ConfigProblem[],
  path: (string | number)[]): unknown {
  if (!value.includes('${')) return value
  const lookup = (name: string, fallback: string | undefined): string => {
    const found = env[name]
    if (found !== undefined && found !== '') return found
    if (fallback !== undefined) return fallback
    problems.push({ path: formatPath(path), message: `environment variable ${name} is not set and has no default (write \${${name}:-default})` })
    return ''
  }
  const whole = WHOLE_REFERENCE.exec(value)
  if (whole) {
    const text = lookup(whole[1] as string, whole[2])
    try {
      const parsed: unknown = parseScalar(text)
      return parsed === null || typeof parsed === 'object' ? text : parsed
    } catch {
      return text
    }
  }
  return value.replace(REFERENCE, (_m, name: string, fallback: string | undefined) => lookup(name, fallback))
}
