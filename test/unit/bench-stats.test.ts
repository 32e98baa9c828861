import t from 'tap'
import { SampleBuffer, latencySummary, quantileSorted, rotatedOrder, round, spread } from '../../bench/stats.js'

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

t.test('latencySummary sorts the samples and reports p50/p90/p99/max/mean', async (t) => {
  const samples = new Float64Array(Array.from({ length: 1000 }, (_, i) => 1000 - i))
  t.same(latencySummary(samples), { p50: 500, p90: 900, p99: 990, max: 1000, mean: 500.5 })
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
