/**
 * `derive(key)` computed once per key object (a WeakMap: gone with the key), with the last key asked about kept
 * beside it. For values derived from immutable objects that every request asks for, such as a config snapshot's:
 * all requests of a snapshot ask with the same key, and comparing it with the last one is cheaper than the WeakMap
 * lookup (docs/performance.md, "The tricks in the code"). Holds the last key alive until another is asked about.
 */
export function derivedOnce<K extends object, V> (derive: (key: K) => V): (key: K) => V {
  const values = new WeakMap<K, V>()
  let lastKey: K | undefined
  let lastValue: V | undefined
  return function derived (key: K): V {
    if (key === lastKey) return lastValue as V
    let value = values.get(key)
    if (value === undefined) {
      value = derive(key)
      values.set(key, value)
    }
    lastKey = key
    lastValue = value
    return value
  }
}
