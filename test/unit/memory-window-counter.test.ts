import t from 'tap'
import { MemoryWindowCounter } from '../../src/limits/request-counter.js'

/** A counter on a clock the test moves. */
function counterAt (points: number, windowSeconds: number) {
  const clock = { now: 1_000_000 }
  return { clock, counter: new MemoryWindowCounter(points, windowSeconds, () => clock.now) }
}

t.test('counts down the points of a window, then refuses with the time left', async (t) => {
  const { clock, counter } = counterAt(3, 60)
  t.same(counter.count('a'), { allowed: true, remaining: 2, msBeforeReset: 60_000 })
  clock.now += 1_000
  t.same(counter.count('a'), { allowed: true, remaining: 1, msBeforeReset: 59_000 })
  t.same(counter.count('a'), { allowed: true, remaining: 0, msBeforeReset: 59_000 })
  clock.now += 500
  t.same(counter.count('a'), { allowed: false, remaining: 0, msBeforeReset: 58_500 })
  t.same(counter.count('a'), { allowed: false, remaining: 0, msBeforeReset: 58_500 }, 'a refused request does not extend the window')
})

t.test('keys are counted apart', async (t) => {
  const { counter } = counterAt(1, 60)
  t.equal(counter.count('a').allowed, true)
  t.equal(counter.count('a').allowed, false)
  t.equal(counter.count('b').allowed, true)
})

t.test('a new window opens at the first request after the old one ended', async (t) => {
  const { clock, counter } = counterAt(1, 10)
  counter.count('a')
  t.equal(counter.count('a').allowed, false)
  clock.now += 10_000
  t.same(counter.count('a'), { allowed: true, remaining: 0, msBeforeReset: 10_000 })
})

t.test('expired keys are swept, so memory holds only recent callers', async (t) => {
  const { clock, counter } = counterAt(5, 1)
  for (let i = 0; i < 1_000; i++) counter.count(`ip-${i}`)
  t.equal(counter.size, 1_000)
  clock.now += 1_000
  counter.count('late')
  t.equal(counter.size, 1, 'only the key counted after the sweep is left')
})
