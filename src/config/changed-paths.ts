/**
 * The YAML paths at which two configs differ (`rate_limits.payments-per-ip.points`, `services.pricing.routes`),
 * never the values (a changed secret shows as its path only). Objects are compared key by key; a list whose
 * length changed is named as a whole, one of equal length by its changed items (`service_accounts[2].status`).
 * Paths are in the order the keys appear, the first `limit` of them.
 */
export function changedPaths (before: unknown, after: unknown, limit = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = []
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (out.length >= limit || a === b) return
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) out.push(path)
      else a.forEach((item, i) => { walk(item, b[i], `${path}[${i}]`) })
      return
    }
    if (isObject(a) && isObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], path === '' ? key : `${path}.${key}`)
      return
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path === '' ? '(whole config)' : path)
  }
  walk(before, after, '')
  return out.slice(0, limit)
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
