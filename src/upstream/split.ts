/** Buckets of the hash range the weights are laid on, in group order. */
export const SPLIT_BUCKETS = 10000

/** Which caller identity keeps a caller in its group. */
export type StickyKey = 'client' | 'organization' | 'store'

/** One ordered rule: every condition given must hold (a header value, the caller's client or organization, the store). */
export interface SplitRule {
  readonly match: {
    readonly header?: { readonly name: string, readonly values: readonly string[] }
    readonly clients?: readonly string[]
    readonly organizations?: readonly string[]
    readonly stores?: readonly string[]
  }
  readonly upstream: string
}

/** A validated `split:` (config/types of the proxy block and the live service; groups checked by their checks). */
export interface SplitSettings {
  readonly rules: readonly SplitRule[]
  readonly weights?: Readonly<Record<string, number>>
  readonly sticky: StickyKey
  readonly fallback?: string
}

/** What a split knows of one request: read once by the caller, so this file needs nothing of fastify. */
export interface SplitCaller {
  readonly clientId?: string
  readonly organizationId?: string
  readonly storeId?: string
  header (name: string): string | undefined
}

/** The group a request goes to, and why (`lanegate explain` prints it). */
export type SplitChoice =
  | { readonly group: string, readonly reason: 'rule', readonly rule: number }
  | { readonly group: string, readonly reason: 'weight', readonly bucket: number }
  | { readonly group: string, readonly reason: 'fallback', readonly why: 'no_sticky_key' | 'no_weights' }

/** A split with its weights laid on the bucket range: made once per (frozen) settings object. */
interface CompiledSplit {
  readonly settings: SplitSettings
  /** Ends (exclusive) of each weighted group's buckets, in group order; a group of weight 0 has an empty range. */
  readonly ranges: ReadonlyArray<{ readonly group: string, readonly end: number }>
  readonly fallback: string
}

const compiled = new WeakMap<SplitSettings, CompiledSplit>()

function compile (settings: SplitSettings, firstGroup: string): CompiledSplit {
  let split = compiled.get(settings)
  if (split === undefined) {
    split = { settings, ranges: bucketRanges(settings.weights ?? {}), fallback: settings.fallback ?? Object.keys(settings.weights ?? {})[0] ?? firstGroup }
    compiled.set(settings, split)
  }
  return split
}

/**
 * The weights as ranges of [0, SPLIT_BUCKETS) in the order they are listed: a reload that moves weight from one
 * group to the next moves only the buckets at the border, so every other caller stays where it was.
 */
export function bucketRanges (weights: Readonly<Record<string, number>>): Array<{ group: string, end: number }> {
  const entries = Object.entries(weights)
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0)
  let running = 0
  return entries.map(([group, weight]) => {
    running += weight
    return { group, end: total === 0 ? 0 : Math.round(running * SPLIT_BUCKETS / total) }
  })
}

/**
 * The bucket of a sticky key: the same on every worker and instance. FNV-1a over the service and the key, then
 * murmur3's finalizer so that keys differing in one character spread over every bucket: no digest object per
 * request. Not a cryptographic hash: the keys come from the config and the token issuer, not the caller's choice.
 */
export function splitBucket (service: string, key: string): number {
  let hash = fnv1a(0x811c9dc5, service)
  hash = Math.imul(hash, 0x01000193) >>> 0 // the separator (a 0 unit): "ab"+"c" and "a"+"bc" differ
  hash = fnv1a(hash, key)
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x85ebca6b)
  hash ^= hash >>> 13
  hash = Math.imul(hash, 0xc2b2ae35)
  hash ^= hash >>> 16
  return (hash >>> 0) % SPLIT_BUCKETS
}

function fnv1a (seed: number, text: string): number {
  let hash = seed
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/**
 * The group of `service` a request goes to: the first rule whose conditions all hold, else the weighted group of
 * the caller's sticky key's bucket; a caller without that key (or a split without weights) goes to `fallback`
 * (default: the first group of `weights`, else `firstGroup`).
 */
export function chooseGroup (settings: SplitSettings, service: string, caller: SplitCaller, firstGroup: string): SplitChoice {
  const split = compile(settings, firstGroup)
  for (let i = 0; i < settings.rules.length; i++) {
    const rule = settings.rules[i]!
    if (ruleMatches(rule, caller)) return { group: rule.upstream, reason: 'rule', rule: i }
  }
  if (split.ranges.length === 0) return { group: split.fallback, reason: 'fallback', why: 'no_weights' }
  const key = stickyValue(settings.sticky, caller)
  if (key === undefined) return { group: split.fallback, reason: 'fallback', why: 'no_sticky_key' }
  const bucket = splitBucket(service, key)
  const range = split.ranges.find((r) => bucket < r.end) ?? split.ranges[split.ranges.length - 1]!
  return { group: range.group, reason: 'weight', bucket }
}

function stickyValue (sticky: StickyKey, caller: SplitCaller): string | undefined {
  if (sticky === 'client') return caller.clientId
  if (sticky === 'organization') return caller.organizationId
  return caller.storeId
}

function ruleMatches ({ match }: SplitRule, caller: SplitCaller): boolean {
  if (match.header !== undefined) {
    const value = caller.header(match.header.name)
    if (value === undefined || !match.header.values.includes(value)) return false
  }
  if (match.clients !== undefined && !includes(match.clients, caller.clientId)) return false
  if (match.organizations !== undefined && !includes(match.organizations, caller.organizationId)) return false
  if (match.stores !== undefined && !includes(match.stores, caller.storeId)) return false
  return true
}

function includes (list: readonly string[], value: string | undefined): boolean {
  return value !== undefined && list.includes(value)
}

/** A choice in words: `rules[0] matched`, `weights: client bucket 9123 of 10000`, or why the fallback. */
export function describeChoice (choice: SplitChoice, sticky: StickyKey): string {
  if (choice.reason === 'rule') return `rules[${choice.rule}] matched`
  if (choice.reason === 'weight') return `weights: ${sticky} bucket ${choice.bucket} of ${SPLIT_BUCKETS}`
  return choice.why === 'no_weights' ? 'no rule matched and no weights: the fallback' : `no ${sticky} to hash (sticky: ${sticky}): the fallback`
}
