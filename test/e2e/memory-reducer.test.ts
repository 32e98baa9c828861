import t from 'tap'
import { MEMORY_REDUCER_FLAG } from '../../src/node-tuning/memory-reducer.js'
import { GATEWAY_NODE_FLAGS } from '../../src/node-tuning/node-flags.js'
import { healthzTraffic } from '../helpers/healthz-traffic.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * The memory reducer (src/node-tuning/memory-reducer.ts) on real processes: after some traffic and an idle spell, V8's
 * memory reducer runs a "reduce memory" full GC in a gateway started with node's defaults (`Mark-Compact (reduce)`
 * under `--trace-gc`), the GC that deoptimizes the request path; in one started with the gateway's flags, over the
 * same spell, it never does.
 */
const REDUCE = /Mark-Compact \(reduce\)/

t.test('a gateway started with the gateway\'s node flags runs no reduce-memory GC where one with node\'s defaults does', async (t) => {
  t.ok(GATEWAY_NODE_FLAGS.includes(MEMORY_REDUCER_FLAG), 'the flags of record turn the reducer off')
  const [oursCfg, bareCfg] = await Promise.all([gatewayFixture().write(), gatewayFixture().write()])
  t.teardown(() => Promise.all([oursCfg.remove(), bareCfg.remove()]))
  const [ours, bare] = await Promise.all([
    spawnGateway({ config: oursCfg.file, nodeArgs: [...GATEWAY_NODE_FLAGS, '--trace-gc'] }),
    spawnGateway({ config: bareCfg.file, nodeArgs: ['--trace-gc'] }),
  ])
  t.teardown(() => { ours.child.kill('SIGKILL'); bare.child.kill('SIGKILL') })
  await Promise.all([healthzTraffic(ours.base, 300), healthzTraffic(bare.base, 300)])
  // Both now idle alike: the bare one's reducer fires some seconds in (8 s after a full GC, its allocation rate low).
  await waitFor(() => REDUCE.test(bare.output()), { what: 'the bare gateway\'s reduce-memory GC', timeoutMs: 120_000, intervalMs: 500 })
  t.match(bare.output(), REDUCE, 'node\'s defaults: the reducer ran once the gateway idled')
  t.notMatch(ours.output(), REDUCE, 'the gateway\'s flags: no reduce-memory GC over the same idle spell')
  t.match(ours.output(), /Mark-Compact|Scavenge/, 'its --trace-gc lines are there to read (GC did run)')
})
