import { LRUCache } from 'lru-cache'

/**
 * external-auth's decisions by key, each kept `ttlMs`, at most `max` (least recently used first out). The expiry is
 * checked against the caller's `now` (Date.now()): lru-cache's own `ttl` arms a 1 ms timer on lookups.
 */
export class DecisionCache<Decision> {
  private readonly entries: LRUCache<string, { readonly decision: Decision, readonly until: number }>
  constructor (private readonly ttlMs: number, max = 10_000) {
    this.entries = new LRUCache({ max })
  }

  get (key: string, now: number): Decision | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until > now) return entry.decision
    this.entries.delete(key)
    return undefined
  }

  set (key: string, decision: Decision, now: number): void {
    this.entries.set(key, { decision, until: now + this.ttlMs })
  }
}
