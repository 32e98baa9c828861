import t from 'tap'
import { isoTime } from '../../../src/logging/access-log/iso-time.js'

t.test('an access line\'s time is Date\'s ISO text, across milliseconds, seconds, days and years', async (t) => {
  const times = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 1_764_428_399_999, 1_764_428_400_000, 1_764_428_400_007, 1_764_428_400_070, 1_764_428_400_700,
    951_782_400_000 - 1, 951_782_400_000, 253_402_300_799_999]
  // In order, backwards and repeated: the kept second must never leak into another second's text.
  for (const ms of [...times, ...times.reverse(), ...times]) t.equal(isoTime(ms), new Date(ms).toISOString(), String(ms))
})

t.test('times Date writes itself: before 1970, past year 9999, fractions of a millisecond', async (t) => {
  for (const ms of [-1, -86_400_001, 253_402_300_800_000, 1_764_428_400_000.5]) t.equal(isoTime(ms), new Date(ms).toISOString(), String(ms))
})
