/**
 * `new Date(ms).toISOString()` for the access log's `time`, made from the second's text kept from the previous line:
 * V8 formats every date through a printf-style formatter, and a busy gateway writes many lines within one second,
 * whose text up to the milliseconds is the same.
 */
let second = Number.NaN
/** `YYYY-MM-DDTHH:MM:SS.` of `second`. */
let prefix = ''

/** The ISO 8601 UTC text of a time in milliseconds since the epoch, as Date's toISOString writes it. */
export function isoTime (ms: number): string {
  // Outside whole, non-negative milliseconds (and years past 9999, whose text is longer) Date writes it itself.
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= LAST_FOUR_DIGIT_YEAR_MS) return new Date(ms).toISOString()
  const s = Math.floor(ms / 1000)
  if (s !== second) {
    second = s
    prefix = new Date(s * 1000).toISOString().slice(0, 20)
  }
  const milliseconds = ms - s * 1000
  return `${prefix}${milliseconds < 10 ? '00' : milliseconds < 100 ? '0' : ''}${milliseconds}Z`
}

/** 10000-01-01T00:00:00.000Z: from there a year has five digits and a sign. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_800_000
