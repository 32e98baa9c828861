/**
 * Freezes an object graph (plain objects and arrays, as a parsed config holds). A validated config is frozen so
 * that nothing changes it behind the snapshot built from it: the WeakMap caches keyed on its objects (payments
 * settings, rate-limit tallies) stay true, and a stray write throws in strict mode instead of leaking into the
 * next request.
 */
export function deepFreeze<T> (value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  Object.freeze(value)
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  return value
}
