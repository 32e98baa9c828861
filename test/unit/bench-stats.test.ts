import t from 'tap'
import { SampleBuffer, latencySummary, quantileSorted, rotatedOrder, round, samplesAbove, samplesForTail, spread } from '../../bench/stats.js'

t.test('spread gives median, min and max; the median of an even count is the mean of the middle two', async (t) => {
  t.same(spread([3, 1, 2]), { median: 2, min: 1, max: 3 })
  t.same(spread([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4 })
  const empty = spread([])
  t.ok(Number.isNaN(empty.median) && Number.isNaN(empty.min) && Number.isNaN(empty.max))
})

t.test('quantileSorted uses the nearest rank', async (t) => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1)
  t.equal(quantileSorted(hundred, 0.5), 50)
  t.equal(quantileSorted(hundred, 0.99), 99)
  t.equal(quantileSorted(hundred, 1), 100)
  t.equal(quantileSorted([7], 0.99), 7)
  t.ok(Number.isNaN(quantileSorted([], 0.5)))
})

t.test('latencySummary sorts the samples and reports p50/p90/p99/p99.9/max/mean', async (t) => {
  const samples = new Float64Array(Array.from({ length: 1000 }, (_, i) => 1000 - i))
  t.same(latencySummary(samples), { p50: 500, p90: 900, p99: 990, p999: 999, max: 1000, mean: 500.5 })
})

t.test('p99.9 is the nearest rank: the 19,980th of 20,000, the slowest of fewer than 1,000', async (t) => {
  const twenty = new Float64Array(Array.from({ length: 20_000 }, (_, i) => i + 1)).reverse()
  const summary = latencySummary(twenty)
  t.equal(summary.p999, 19_980)
  t.equal(summary.p99, 19_800)
  t.equal(summary.max, 20_000)
  // Twenty slow outliers in 20,000: p99.9 lands on the fastest of them, p99 does not see them.
  const outliers = new Float64Array(20_000).fill(1)
  for (let i = 0; i < 20; i++) outliers[i * 997] = 50 + i
  t.same([latencySummary(outliers.slice()).p99, latencySummary(outliers.slice()).p999], [1, 1], '20 outliers sit just above p99.9')
  outliers[5] = 40
  t.equal(latencySummary(outliers).p999, 40, 'a 21st reaches it')
  t.equal(latencySummary(new Float64Array([3, 1, 2])).p999, 3)
  t.ok(Number.isNaN(latencySummary(new Float64Array(0)).p999))
})

t.test('samplesAbove counts what a nearest-rank quantile rests on', async (t) => {
  t.equal(samplesAbove(20_000, 0.999), 20)
  t.equal(samplesAbove(20_000, 0.99), 200)
  t.equal(samplesAbove(19_999, 0.999), 19)
  t.equal(samplesAbove(300, 0.999), 0)
  t.equal(samplesAbove(300, 0.99), 3)
  t.equal(samplesAbove(1, 0.5), 0)
  t.equal(samplesAbove(0, 0.99), 0)
})

t.test('samplesForTail is the fewest samples that put that many above the quantile', async (t) => {
  t.equal(samplesForTail(0.999, 20), 20_000)
  t.equal(samplesForTail(0.999, 10), 10_000)
  t.equal(samplesForTail(0.99, 20), 2_000)
  t.equal(samplesForTail(0.5, 1), 2)
  for (const [q, above] of [[0.999, 20], [0.99, 7], [0.9, 3]] as const) {
    const n = samplesForTail(q, above)
    t.ok(samplesAbove(n, q) >= above && samplesAbove(n - 1, q) < above, `q ${q}, ${above} above: ${n} is the least`)
  }
})

t.test('SampleBuffer grows past its initial size and copies out what was pushed', async (t) => {
  const buffer = new SampleBuffer(2)
  for (let i = 0; i < 5; i++) buffer.push(i * 1.5)
  t.equal(buffer.length, 5)
  t.same([...buffer.values()], [0, 1.5, 3, 4.5, 6])
})

t.test('rotatedOrder starts each round one variant later', async (t) => {
  t.same(rotatedOrder(3, 0), [0, 1, 2])
  t.same(rotatedOrder(3, 1), [1, 2, 0])
  t.same(rotatedOrder(3, 2), [2, 0, 1])
  t.same(rotatedOrder(3, 3), [0, 1, 2])
})

t.test('round keeps non-finite values as they are', async (t) => {
  t.equal(round(1.23456, 2), 1.23)
  t.ok(Number.isNaN(round(Number.NaN)))
})
