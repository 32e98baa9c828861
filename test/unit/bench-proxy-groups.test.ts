import t from 'tap'
import { madeUpScenario, measuredLoad } from '../helpers/bench-load-result.js'
import type { MirrorMeasurement, ScenarioResult } from '../../bench/result-types.js'
import { checkTargets } from '../../bench/targets.js'
import { mirrorCounters } from '../../bench/proxy-mirror.js'

const scenario = madeUpScenario

const BREAKER_SPLIT = 'proxy service with circuit breakers and a split over two groups ÷ plain, server CPU per request, same rounds'

t.test('breaker + split: CPU per request ÷ the plain block\'s, paired within each round, with the twin beside it', async (t) => {
  const proxy = scenario('proxy-service', [
    { 'lanegate-proxy-service': measuredLoad(100), 'lanegate-proxy-breaker-split': measuredLoad(102), 'lanegate-proxy-service-twin': measuredLoad(99) },
    { 'lanegate-proxy-service': measuredLoad(120), 'lanegate-proxy-breaker-split': measuredLoad(121.2), 'lanegate-proxy-service-twin': measuredLoad(126) },
    { 'lanegate-proxy-service': measuredLoad(110), 'lanegate-proxy-breaker-split': measuredLoad(115.5), 'lanegate-proxy-service-twin': measuredLoad(110) },
  ])
  t.same(checkTargets([proxy]).filter((c) => c.what === BREAKER_SPLIT), [{
    scenario: 'proxy-service',
    what: BREAKER_SPLIT,
    goal: '≤ 1.03×',
    measured: '1.02× (1.01–1.05); 115.5 vs 110 µs; a second plain process ÷ plain: 1× (0.99–1.05)',
    met: true,
  }])
})

t.test('breaker + split above 1.03× the plain block is not met; without the twin the line has no control', async (t) => {
  const proxy = scenario('proxy-service', [
    { 'lanegate-proxy-service': measuredLoad(100), 'lanegate-proxy-breaker-split': measuredLoad(104) },
    { 'lanegate-proxy-service': measuredLoad(100), 'lanegate-proxy-breaker-split': measuredLoad(105) },
  ])
  t.same(checkTargets([proxy]).filter((c) => c.what === BREAKER_SPLIT).map((c) => [c.measured, c.met]), [['1.045× (1.04–1.05); 104.5 vs 100 µs', false]])
  const plainOnly = scenario('proxy-service', [{ 'lanegate-proxy-service': measuredLoad(100) }])
  t.same(checkTargets([plainOnly]).filter((c) => c.what === BREAKER_SPLIT), [], 'no breaker-split run: no line')
})

const MIRROR_P99 = 'p99 at c=1 of the GET mirrored to a group answering 2 s late ÷ the same GET unmirrored, same gateway, same rounds'

function mirrorScenario (rounds: Array<[number, number]>, mirror?: MirrorMeasurement): ScenarioResult {
  const runs = rounds.map(([mirrored, unmirrored]) => ({ 'lanegate-proxy-mirrored': measuredLoad(200, { p99: mirrored, p999: mirrored * 2 }), 'lanegate-proxy-unmirrored': measuredLoad(200, { p99: unmirrored, p999: unmirrored * 2 }) }))
  return scenario('proxy-mirror', runs, { kind: 'latency', connections: 1, ...(mirror === undefined ? {} : { mirror }) })
}

t.test('the mirror\'s p99 goal: mirrored ÷ unmirrored p99 within each round, median at most 1.10', async (t) => {
  const met = checkTargets([mirrorScenario([[1.05, 1], [1.2, 1], [0.9, 1]])]).filter((c) => c.what === MIRROR_P99)
  t.same(met.map((c) => [c.goal, c.measured, c.met]), [['≤ 1.1×', '1.05× (0.9–1.2); p99 medians 1.05 vs 1 ms; p99.9 1.05× (0.9–1.2)', true]])
  const missed = checkTargets([mirrorScenario([[1.15, 1], [1.2, 1], [0.9, 1]])]).filter((c) => c.what === MIRROR_P99)
  t.same(missed.map((c) => [c.measured, c.met]), [['1.15× (0.9–1.2); p99 medians 1.15 vs 1 ms; p99.9 1.15× (0.9–1.2)', false]])
})

const COUNTS = { percent: 10, maxInFlight: 16, delayMs: 2000, requests: 10_000, droppedBodyTooLarge: 0 }

t.test('the mirror\'s counts: copies offered (sent or dropped) near percent, and every copy sent received', async (t) => {
  const lines = (m: MirrorMeasurement) => checkTargets([mirrorScenario([], m)]).filter((c) => c.scenario === 'proxy-mirror').map((c) => [c.goal, c.measured, c.met])
  t.same(lines({ ...COUNTS, sent: 80, droppedInFlight: 940, received: 80 }),
    [['10 % ± 1; received = sent', '10.20 %: 80 sent, 940 dropped in flight (at most 16), 0 for size; 80 received', true]])
  t.same(lines({ ...COUNTS, sent: 80, droppedInFlight: 1040, received: 80 }).map(([, , met]) => met), [false], '11.2 %: too many offered')
  t.same(lines({ ...COUNTS, sent: 80, droppedInFlight: 940, received: 79 }).map(([, , met]) => met), [false], 'a copy counted as sent never reached the slow lane')
})

t.test('mirrorCounters reads the mirrored route\'s requests (every status) and the block\'s copies by result from /metrics', async (t) => {
  const metrics = [
    '# HELP lanegate_http_requests_total Requests answered, by service, route id, method and status.',
    'lanegate_http_requests_total{service="pricing",route="read_price",method="GET",status="200"} 5000',
    'lanegate_http_requests_total{service="pricing",route="read_price_mirrored",method="GET",status="200"} 4990',
    'lanegate_http_requests_total{service="pricing",route="read_price_mirrored",method="GET",status="502"} 10',
    'lanegate_upstream_mirror_requests_total{service="pricing",result="sent"} 41',
    'lanegate_upstream_mirror_requests_total{service="pricing",result="dropped_in_flight"} 459',
    'lanegate_upstream_mirror_requests_total{service="other",result="sent"} 7',
  ].join('\n')
  t.same(mirrorCounters(metrics), { requests: 5000, sent: 41, droppedInFlight: 459, droppedBodyTooLarge: 0 })
})
