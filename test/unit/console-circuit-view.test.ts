import t from 'tap'
import type { RawUpstreams } from '../../src/console/process-views.js'
import { shapeView } from '../../src/console/shape-views.js'

/** The console's Upstreams view shows each target's breaker state: the most open one the workers report. */

const target = (url: string, circuit?: 'closed' | 'half_open' | 'open'): RawUpstreams['upstreams'][number]['targets'][number] => ({
  url, weight: 1, state: 'healthy', inFlight: 1, lastProbe: undefined, ...(circuit === undefined ? {} : { circuit }),
})

const worker = (a: 'closed' | 'half_open' | 'open', b: 'closed' | 'half_open' | 'open'): RawUpstreams => ({
  upstreams: [
    { upstream: 'pricing', kind: 'proxy', used: true, targets: [target('http://a.test', a), target('http://b.test', b)] },
    { upstream: 'plain', kind: 'proxy', used: true, targets: [target('http://c.test')] },
  ],
  lastMinute: {},
  splits: [],
})

t.test('targets with a breaker carry its state, merged over workers (open > half_open > closed); others carry none', async (t) => {
  const shaped = shapeView('upstreams', [worker('open', 'closed'), worker('closed', 'half_open')], { bounds: [0.1] }) as {
    upstreams: Array<{ name: string, targets: Array<Record<string, unknown>> }>
  }
  t.same(shaped.upstreams.map((u) => [u.name, u.targets.map((x) => [x.url, x.in_flight, x.circuit])]), [
    ['plain', [['http://c.test', 2, undefined]]],
    ['pricing', [['http://a.test', 2, 'open'], ['http://b.test', 2, 'half_open']]],
  ])
  t.notOk('circuit' in (shaped.upstreams[0]?.targets[0] ?? {}), 'no circuit key for a target without a breaker')
})
