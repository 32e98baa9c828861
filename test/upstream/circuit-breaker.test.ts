import t from 'tap'
import { CircuitBreaker, type CircuitBreakerSettings, type CircuitTransition } from '../../src/upstream/circuit-breaker.js'

/** The breaker's state machine on a clock the test moves (no timers, no sockets). */
function breaker (overrides: Partial<CircuitBreakerSettings> = {}): { b: CircuitBreaker, clock: { now: number }, seen: string[] } {
  const clock = { now: 1_000_000 }
  const seen: string[] = []
  const settings: CircuitBreakerSettings = {
    failure_statuses: [500, 502, 503, 504],
    open_seconds: 10,
    max_open_seconds: 35,
    half_open_requests: 2,
    ...overrides,
  }
  const b = new CircuitBreaker(settings, (tr: CircuitTransition) => { seen.push(`${tr.to}:${tr.reason}:${tr.openMs}`) }, () => clock.now)
  return { b, clock, seen }
}

t.test('consecutive_failures: N failing statuses in a row open it; a success in between starts the count again', async (t) => {
  const { b, seen } = breaker({ consecutive_failures: 3 })
  b.recordAnswer(503, 5)
  b.recordAnswer(500, 5)
  b.recordAnswer(200, 5)
  b.recordAnswer(503, 5)
  b.recordAnswer(404, 5) // not a failure status: a success for the breaker
  b.recordAnswer(502, 5)
  b.recordFailure() // no answer counts too
  t.equal(b.state, 'closed')
  t.equal(b.allows(), true)
  b.recordAnswer(504, 5)
  t.equal(b.state, 'open')
  t.equal(b.allows(), false)
  t.same(seen, ['open:consecutive_failures:10000'])
})

t.test('open: no traffic for open_seconds, then half-open lets half_open_requests through; all succeeding closes it', async (t) => {
  const { b, clock, seen } = breaker({ consecutive_failures: 1 })
  b.recordFailure()
  t.equal(b.retryAfterSeconds(), 10)
  clock.now += 9_001
  t.equal(b.retryAfterSeconds(), 1, 'Retry-After rounds up and is at least 1')
  t.equal(b.allows(), false)
  clock.now += 999
  t.equal(b.currentState, 'half_open', 'reads as half-open once the time is over')
  t.equal(b.allows(), true)
  t.equal(b.state, 'half_open')
  b.admit()
  t.equal(b.allows(), true, 'a second trial is allowed')
  t.equal(b.retryAfterSeconds(), 0, 'a trial place is free: no Retry-After')
  b.admit()
  t.equal(b.allows(), false, 'no third trial while two are out')
  t.equal(b.retryAfterSeconds(), 10, 'every place taken: the caller is told when one frees at the latest (503 circuit_open, not 502 ejected)')
  b.recordAnswer(200, 5)
  t.equal(b.state, 'half_open', 'one success of two is not enough')
  b.recordAnswer(204, 5)
  t.equal(b.state, 'closed')
  t.equal(b.retryAfterSeconds(), 0)
  t.same(seen, ['open:consecutive_failures:10000', 'half_open:open_time_over:10000', 'closed:half_open_success:10000'])
})

t.test('a failed trial reopens it for twice as long, up to max_open_seconds; closing resets the open time', async (t) => {
  const { b, clock, seen } = breaker({ consecutive_failures: 1, half_open_requests: 1 })
  b.recordFailure()
  const trialFails = (): void => {
    clock.now = b.openUntil
    t.equal(b.allows(), true)
    b.admit()
    b.recordAnswer(503, 5)
  }
  trialFails()
  trialFails()
  trialFails()
  t.equal(b.openUntil - clock.now, 35_000, 'capped at max_open_seconds')
  clock.now = b.openUntil
  t.equal(b.allows(), true)
  b.admit()
  b.recordAnswer(200, 5)
  b.recordFailure()
  t.equal(b.openUntil - clock.now, 10_000, 'after a close it opens for open_seconds again')
  t.same(seen.filter((s) => s.startsWith('open')), [
    'open:consecutive_failures:10000',
    'open:half_open_failure:20000',
    'open:half_open_failure:35000',
    'open:half_open_failure:35000',
    'open:consecutive_failures:10000',
  ])
})

t.test('a trial whose outcome never comes frees its place after one open period', async (t) => {
  const { b, clock } = breaker({ consecutive_failures: 1, half_open_requests: 1 })
  b.recordFailure()
  clock.now = b.openUntil
  t.equal(b.allows(), true)
  b.admit()
  t.equal(b.allows(), false)
  clock.now += 9_999
  t.equal(b.allows(), false)
  clock.now += 1
  t.equal(b.allows(), true)
})

t.test('failure_rate: opens at percent of at least min_requests answers in the window; old seconds fall out', async (t) => {
  const { b, clock, seen } = breaker({ failure_rate: { percent: 50, window_seconds: 10, min_requests: 4 } })
  b.recordAnswer(500, 1)
  b.recordAnswer(500, 1)
  b.recordAnswer(500, 1)
  t.equal(b.state, 'closed', 'three answers are below min_requests')
  clock.now += 11_000 // the three failures leave the window
  b.recordAnswer(200, 1)
  b.recordAnswer(200, 1)
  b.recordAnswer(200, 1)
  b.recordAnswer(500, 1)
  t.equal(b.state, 'closed', '1 of 4 is 25 %')
  clock.now += 1_000
  b.recordAnswer(500, 1)
  t.equal(b.state, 'closed', '2 of 5 is 40 %')
  b.recordAnswer(500, 1)
  t.equal(b.state, 'open', '3 of 6 is 50 %')
  t.same(seen, ['open:failure_rate:10000'])
})

t.test('slow: answers whose head took ms or more count against percent; a slow trial reopens it', async (t) => {
  const { b, clock, seen } = breaker({ slow: { ms: 1000, percent: 60, window_seconds: 30, min_requests: 5 }, half_open_requests: 1 })
  for (const ms of [2000, 50, 2500, 1000]) b.recordAnswer(200, ms)
  t.equal(b.state, 'closed', 'four answers (three slow) are below min_requests')
  b.recordAnswer(200, 40)
  t.equal(b.state, 'open', '3 slow of 5 is 60 %')
  clock.now = b.openUntil
  t.equal(b.allows(), true)
  b.admit()
  b.recordAnswer(200, 1500)
  t.equal(b.state, 'open', 'a slow trial is a failed one')
  t.same(seen, ['open:slow:10000', 'half_open:open_time_over:10000', 'open:half_open_failure:20000'])
})

t.test('applyShared: an opening from another worker keeps the target out until its end; a closing closes', async (t) => {
  const { b, clock, seen } = breaker({ consecutive_failures: 5 })
  b.applyShared({ to: 'open', reason: 'consecutive_failures', openMs: 20_000, until: clock.now + 20_000 })
  t.equal(b.state, 'open')
  t.equal(b.retryAfterSeconds(), 20)
  b.applyShared({ to: 'open', reason: 'consecutive_failures', openMs: 10_000, until: clock.now + 10_000 })
  t.equal(b.retryAfterSeconds(), 20, 'an opening that ends sooner does not shorten it')
  b.applyShared({ to: 'closed', reason: 'half_open_success', openMs: 0, until: 0 })
  t.equal(b.state, 'closed')
  b.applyShared({ to: 'open', reason: 'consecutive_failures', openMs: 10_000, until: clock.now - 1 })
  t.equal(b.state, 'closed', 'an opening already over is ignored')
  t.same(seen, [], 'shared transitions are not reported again')
})

t.test('a request let through before the half-open period answering late is not its trial: it neither closes nor reopens it', async (t) => {
  const { b, clock } = breaker({ consecutive_failures: 1, half_open_requests: 1 })
  const sentWhileClosed = b.epoch
  b.recordFailure()
  t.equal(b.state, 'open')
  clock.now += 10_000
  t.equal(b.allows(), true)
  b.admit()
  const trial = b.epoch
  b.recordAnswer(200, 5, sentWhileClosed)
  t.equal(b.state, 'half_open', 'a late success of an earlier period does not close it')
  b.recordFailure(sentWhileClosed)
  t.equal(b.state, 'half_open', 'nor does a late failure reopen it')
  b.recordAnswer(200, 5, trial)
  t.equal(b.state, 'closed', 'the trial\'s own answer does')
})
