/**
 * `3 errors`, `1 error`: a count with its noun in agreement, for messages that count (`1 of the stores are…` read
 * wrong). `plural` defaults to the singular plus `s`.
 */
export function counted (n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`
}
