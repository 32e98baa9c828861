import { timingSafeEqual } from 'node:crypto'

/**
 * A remembered secret (token, API key) against the presented one in constant time: a connection a load balancer
 * reuses for several callers holds another caller's secret in its memory, and `===` would time how much of it a
 * guess got right. Only the length is told apart early (it is not secret: a key's length is the same for all).
 */
export function sameSecret (remembered: string, presented: string): boolean {
  if (remembered.length !== presented.length) return false
  // UTF-8, not latin1: latin1 keeps one byte of each character, and two different query values would compare equal.
  const a = Buffer.from(remembered)
  const b = Buffer.from(presented)
  return a.length === b.length && timingSafeEqual(a, b)
}
