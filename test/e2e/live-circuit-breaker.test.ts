import t from 'tap'
import { send } from '../helpers/exchange-http.js'
import { liveSetup } from '../helpers/exchange-config.js'

/** `services.live.circuit_breaker`: each store lane has its own breaker; an open lane answers 503 circuit_open. */

const BREAKER = { consecutive_failures: 2, open_seconds: 60, max_open_seconds: 60 }

t.test('a lane answering 503 is opened after 2 failures: 503 circuit_open with Retry-After, the lane not contacted; another store\'s lane is not affected', async (t) => {
  const { base, laneA, hq } = await liveSetup(t, { live: { circuit_breaker: BREAKER } })
  laneA.setMode({ kind: 'fail', status: 503 })
  for (let i = 0; i < 2; i++) {
    const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
    t.equal(res.status, 503)
    t.equal(JSON.parse(res.body).upstream_status, 503)
  }
  const seen = laneA.requests.length
  const res = await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })
  t.same([res.status, res.headers['retry-after'], JSON.parse(res.body)], [503, '60', {
    error: 'upstream_error',
    upstream_status: 0,
    upstream_failure: 'circuit_open',
    upstream_body: '',
    message: 'The lane software is failing: its circuit breaker is open.',
  }])
  t.equal(laneA.requests.length, seen, 'the open lane got nothing')
  const other = await send(base, { path: '/v1/stores/org_store_b/live/items', headers: hq })
  t.equal(other.status, 200, 'store b\'s lane has its own, closed breaker')
})

t.test('without circuit_breaker a failing lane keeps getting every request', async (t) => {
  const { base, laneA, hq } = await liveSetup(t)
  laneA.setMode({ kind: 'fail', status: 503 })
  for (let i = 0; i < 4; i++) t.equal((await send(base, { path: '/v1/stores/org_store_a/live/items', headers: hq })).status, 503)
  t.equal(laneA.requests.length, 4)
})
