/**
 * Shared copies of the claim values many tokens repeat (client ids, organization ids, scope strings), so that
 * the token verifier's cache of up to 100,000 principals holds one copy of each instead of one per token.
 * Bounded: once full, new values are used as they are (correct, just not shared), so a flood of distinct values
 * cannot grow these tables.
 */

const maxEntries = 10_000

const strings = new Map<string, string>()
const scopeSets = new Map<string, ReadonlySet<string>>()

/**
 * The shared copy of `value` (the first one seen), kept as a flat string: a value cut out of a longer one (a scope
 * of a `scope` claim, by split) is a slice of it in V8, and comparing a slice with an equal string of the config
 * (`scope`'s `granted.has(name)`, on every request) took V8's runtime path: 0.3k instructions per request.
 */
export function internString (value: string): string {
  const known = strings.get(value)
  if (known !== undefined) return known
  if (strings.size >= maxEntries) return value
  // split('') and join('') copy the UTF-16 units as they are (lone surrogates too) into one flat string.
  const flat = value.split('').join('')
  strings.set(flat, flat)
  return flat
}

/**
 * The scopes of a space-separated `scope` claim as a set shared by every token with the same claim. Callers must
 * never mutate it (Principal.scopes is a ReadonlySet; applyServiceAccount builds a new set when it narrows).
 */
export function internScopes (scope: string): ReadonlySet<string> {
  const known = scopeSets.get(scope)
  if (known !== undefined) return known
  const set: ReadonlySet<string> = new Set(scope.split(' ').filter((s) => s !== '').map(internString))
  if (scopeSets.size < maxEntries) scopeSets.set(scope, set)
  return set
}
