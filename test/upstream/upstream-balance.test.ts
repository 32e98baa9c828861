import t from 'tap'
import { callUpstream, type CallInput } from '../../src/upstream/call.js'
import { startBackend, testSettings, testUpstream } from '../helpers/upstream-servers.js'
import { waitFor } from '../helpers/wait-for.js'

const GET: CallInput = { method: 'GET', path: '/', timeoutMs: 2000, maxBodyBytes: 1024, maxErrorBodyBytes: 64 }

t.test('round_robin with weights 1 and 2 sends a third and two thirds of the requests', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([a.url, { url: b.url, weight: 2 }]))
  const answers: string[] = []
  for (let i = 0; i < 30; i++) answers.push((await callUpstream(upstream, GET)).body)
  t.same([a.seen.length, b.seen.length], [10, 20])
  // Smooth: never more than two of b in a row, a never twice in a row.
  t.notOk(answers.join('').includes('bbb'))
  t.notOk(answers.join('').includes('aa'))
})

t.test('round_robin with two equal targets alternates exactly', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([a.url, b.url]))
  const answers: string[] = []
  for (let i = 0; i < 6; i++) answers.push((await callUpstream(upstream, GET)).body)
  t.same(answers, ['a', 'b', 'a', 'b', 'a', 'b'])
})

t.test('round_robin spreads concurrent requests 50/50 over two equal targets', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([a.url, b.url]))
  await Promise.all(Array.from({ length: 200 }, () => callUpstream(upstream, GET)))
  t.same([a.seen.length, b.seen.length], [100, 100])
})

t.test('least_connections sends new requests to the target with fewer in flight', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  // a holds its requests until released.
  const held: Array<() => void> = []
  a.handle((_req, res) => { held.push(() => res.end('a')) })
  const upstream = testUpstream(t, testSettings([a.url, b.url], { balance: 'least_connections' }))
  const first = callUpstream(upstream, GET)
  await waitFor(() => a.seen.length === 1, { what: 'a.seen.length === 1' })
  const answers: string[] = []
  for (let i = 0; i < 10; i++) answers.push((await callUpstream(upstream, GET)).body)
  t.same(answers, Array(10).fill('b'))
  for (const release of held) release()
  t.equal((await first).body, 'a')
  t.same(upstream.targets.map((target) => target.inFlight), [0, 0])
})

t.test('least_connections weighs the load: weight 3 takes three in flight before weight 1 takes one more', async (t) => {
  const a = await startBackend(t, 'a')
  const b = await startBackend(t, 'b')
  const upstream = testUpstream(t, testSettings([{ url: a.url, weight: 3 }, b.url], { balance: 'least_connections' }))
  const [ta, tb] = upstream.targets
  if (ta === undefined || tb === undefined) throw new Error('two targets expected')
  ta.inFlight = 2
  tb.inFlight = 1
  t.equal(upstream.pick(), ta, '2/3 < 1/1')
  ta.inFlight = 3
  const names = [upstream.pick(), upstream.pick()].map((target) => target === ta ? 'a' : 'b')
  t.same(names.sort(), ['a', 'b'], '3/3 = 1/1: ties go round')
  ta.inFlight = 0
  tb.inFlight = 0
})

