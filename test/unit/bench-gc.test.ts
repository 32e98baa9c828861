import t from 'tap'
import { GcRing, type GcPause } from '../../bench/gc-ring.js'
import { runGc, summarizeGc } from '../../bench/gc-summary.js'
import { countOverlapping, FOLLOW_MS, outsideGc, overlappingByChance, overlappingByKind, overlaps, summarizePauses } from '../../bench/gc-tail.js'
import type { RunGc } from '../../bench/result-types.js'

const pause = (startMs: number, durationMs: number, kind = 1): GcPause => ({ startMs, durationMs, kind })

t.test('the ring hands out the pauses that overlap a window, a pause running into it included', async (t) => {
  const ring = new GcRing(8)
  ring.push(10, 2, 1) // 10–12: before the window
  ring.push(19, 2, 1) // 19–21: runs into it
  ring.push(25, 1, 2) // inside
  ring.push(29.5, 1, 1) // 29.5–30.5: runs out of it
  ring.push(31, 1, 1) // after
  t.same(ring.window(20, 30), { pauses: [pause(19, 2), pause(25, 1, 2), pause(29.5, 1)], complete: true })
  t.same(ring.window(12, 19), { pauses: [], complete: true }, 'touching ends do not overlap')
  t.same(ring.window(100, 200), { pauses: [], complete: true })
})

t.test('the ring keeps the last pauses and says when a window reaches back past them', async (t) => {
  const ring = new GcRing(3)
  for (let i = 0; i < 5; i++) ring.push(i * 10, 1, 1) // 0, 10, 20, 30, 40: 0 and 10 overwritten
  t.same(ring.window(15, 45), { pauses: [pause(20, 1), pause(30, 1), pause(40, 1)], complete: true }, 'the window starts after the overwritten pauses ended')
  t.same(ring.window(11, 45), { pauses: [pause(20, 1), pause(30, 1), pause(40, 1)], complete: true }, 'the last overwritten pause ended as the window began')
  t.same(ring.window(5, 45), { pauses: [pause(20, 1), pause(30, 1), pause(40, 1)], complete: false }, 'it missed the pause at 10')
  t.same(new GcRing(3).window(0, 10), { pauses: [], complete: true }, 'an empty ring is complete')
})

t.test('summarizePauses gives count, total and longest', async (t) => {
  t.same(summarizePauses([pause(0, 1.5), pause(10, 0.25), pause(20, 3)]), { count: 3, totalMs: 4.75, longestMs: 3, complete: true })
  t.same(summarizePauses([], false), { count: 0, totalMs: 0, longestMs: 0, complete: false })
})

t.test('a sample meets a pause when it starts, ends or runs through it', async (t) => {
  const gc = pause(10, 2) // 10–12
  t.ok(overlaps({ startMs: 11, endMs: 15 }, gc), 'started during it')
  t.ok(overlaps({ startMs: 8, endMs: 11 }, gc), 'ended during it')
  t.ok(overlaps({ startMs: 9, endMs: 13 }, gc), 'ran through it')
  t.ok(overlaps({ startMs: 10.5, endMs: 11.5 }, gc), 'inside it')
  t.notOk(overlaps({ startMs: 5, endMs: 10 }, gc), 'ended as it began')
  t.notOk(overlaps({ startMs: 12, endMs: 14 }, gc), 'began as it ended')
  const tail = [{ startMs: 11, endMs: 15 }, { startMs: 5, endMs: 10 }, { startMs: 29, endMs: 31 }, { startMs: 40, endMs: 41 }]
  t.equal(countOverlapping(tail, [gc, pause(30, 0.5)]), 2)
  t.equal(countOverlapping(tail, []), 0)
})

t.test('overlappingByKind files each sample that met a pause under the longest pause it met', async (t) => {
  const pauses = [pause(10, 2, 1), pause(13, 5, 4), pause(30, 1, 1), pause(50, 1, 8), pause(70, 1, 32)]
  const tail = [
    { startMs: 11, endMs: 14 }, // meets the minor 10–12 and the major 13–18: the major is longer
    { startMs: 29, endMs: 31 }, // a minor
    { startMs: 9, endMs: 11 }, // a minor
    { startMs: 49, endMs: 51 }, // incremental marking
    { startMs: 69, endMs: 71 }, // a kind perf_hooks does not name: by its number
    { startMs: 90, endMs: 95 }, // none
  ]
  t.same(overlappingByKind(tail, pauses), { major: 1, minor: 2, incremental: 1, 32: 1 })
  t.equal(countOverlapping(tail, pauses), 5, 'the same samples, counted once each')
  t.same(overlappingByKind(tail, []), {})
})

t.test('overlappingByChance: the share of the run in which a sample of that length would meet a pause', async (t) => {
  // A 100 ms window, one 2 ms pause at 50: a 3 ms sample meets it if it starts in (47, 52): 5 ms of 100.
  t.equal(overlappingByChance([{ startMs: 0, endMs: 3 }], [pause(50, 2)], 0, 100), 0.05)
  // Two such samples: twice that; no pauses: none.
  t.equal(overlappingByChance([{ startMs: 0, endMs: 3 }, { startMs: 10, endMs: 13 }], [pause(50, 2)], 0, 100), 0.1)
  t.equal(overlappingByChance([{ startMs: 0, endMs: 3 }], [], 0, 100), 0)
  // Two pauses closer than the sample's length: the covered spans merge (46–52 and 51–55 → 46–55, 9 ms).
  t.equal(overlappingByChance([{ startMs: 0, endMs: 4 }], [pause(54, 1), pause(50, 2)], 0, 100), 0.09)
  // Clipped to the window: a pause at its very start, one past its end; a pause as long as the run: certain.
  t.equal(overlappingByChance([{ startMs: 0, endMs: 3 }], [pause(0, 1)], 0, 100), 0.01)
  t.equal(overlappingByChance([{ startMs: 0, endMs: 50 }], [pause(10, 1), pause(70, 1)], 0, 60), 0.85)
  t.equal(overlappingByChance([{ startMs: 0, endMs: 5 }], [pause(0, 60)], 0, 60), 1)
})

t.test('outsideGc: of the tail that met no pause, those just after a pause and those in an episode of slow samples', async (t) => {
  t.equal(FOLLOW_MS, 5)
  const tail = [
    { startMs: 100, endMs: 102 }, // ran through the pause at 101: not outside
    { startMs: 103, endMs: 104 }, // 1 ms after that pause ended: after a pause
    { startMs: 500, endMs: 501 }, // an episode of two (3 ms apart)
    { startMs: 503, endMs: 504 },
    { startMs: 800, endMs: 801 }, // alone, far from any pause
  ]
  const found = outsideGc(tail, [pause(101, 1), pause(300, 1)], 0, 1000)
  t.equal(found.outside, 4)
  t.equal(found.afterPause, 1, 'the sample starting 1 ms after a pause ended')
  t.equal(found.inEpisode, 2, 'the two 3 ms apart (the one 3 ms after the GC-hit sample has no company that met no GC)')
  // Chance, each of the four 1 ms samples: [101, 107] and [300, 306] of 1000 ms = 0.012; with three others at 10/1000 each.
  t.equal(Number(found.afterPauseByChance.toFixed(6)), 0.048)
  t.equal(Number(found.inEpisodeByChance.toFixed(6)), Number((4 * (1 - 0.99 ** 3)).toFixed(6)))
  t.same(outsideGc([], [pause(1, 1)], 0, 1000), { outside: 0, afterPause: 0, afterPauseByChance: 0, inEpisode: 0, inEpisodeByChance: 0 })
  // Two samples that started at the same instant (two connections) are each other's company, not one sample.
  t.equal(outsideGc([{ startMs: 10, endMs: 12 }, { startMs: 10, endMs: 11 }], [], 0, 1000).inEpisode, 2)
})

t.test('runGc counts the tail against the server and the lane; a server without a preload reports none', async (t) => {
  const tail = [{ startMs: 11, endMs: 13 }, { startMs: 50, endMs: 52 }, { startMs: 80, endMs: 81 }]
  const gc = runGc({
    server: { pauses: [pause(12, 1), pause(60, 2)], complete: true, youngGenerationBytes: 8 * 1024 * 1024 },
    upstream: { pauses: [pause(80.5, 0.2)], complete: false },
  }, tail, { fromMs: 0, toMs: 100 })
  t.same(gc, {
    server: { count: 2, totalMs: 3, longestMs: 2, complete: true, youngGenerationBytes: 8 * 1024 * 1024 },
    upstream: { count: 1, totalMs: 0.2, longestMs: 0.2, complete: false },
    // Chance: the 2 ms samples cover 3 + 4 ms each (0.07), the 1 ms one 2 + 3 ms (0.05).
    // Outside GC: 50–52 and 80–81; chance after a pause: [11, 18] and [60, 67] (0.14), [12, 18] and [61, 67] (0.12);
    // in an episode: 0.1 (the other, within ±5 ms of a 100 ms run) for each of the two.
    tail: {
      samples: 3,
      duringServerGc: 1,
      serverGcKinds: { minor: 1 },
      serverByChance: 0.19,
      duringUpstreamGc: 1,
      outsideServerGc: { outside: 2, afterPause: 0, afterPauseByChance: 0.26, inEpisode: 0, inEpisodeByChance: 0.2 },
    },
  })
  t.same(runGc({ server: null, upstream: { pauses: [], complete: true } }, tail, { fromMs: 0, toMs: 100 }), {
    server: null,
    upstream: { count: 0, totalMs: 0, longestMs: 0, complete: true },
    tail: { samples: 3, duringServerGc: 0, serverByChance: 0, duringUpstreamGc: 0 },
  })
  t.same(runGc({ server: { pauses: [], complete: true } }, [], { fromMs: 0, toMs: 100 }).upstream, undefined, 'no upstream: none reported')
})

t.test('summarizeGc spreads the pauses over rounds and sums the tail, nginx marked as not Node', async (t) => {
  const round = (count: number, totalMs: number, longestMs: number, samples: number, during: number, complete = true): RunGc => ({
    server: { count, totalMs, longestMs, complete, youngGenerationBytes: count * 512 * 1024 },
    upstream: { count: 1, totalMs: 0.5, longestMs: 0.5, complete: true },
    tail: { samples, duringServerGc: during, serverGcKinds: { minor: during - 10, major: 10 }, serverByChance: 1.25, duringUpstreamGc: 1 },
  })
  const nginx: RunGc = { server: null, upstream: { count: 2, totalMs: 1, longestMs: 0.6, complete: true }, tail: { samples: 20, duringServerGc: 0, serverByChance: 0, duringUpstreamGc: 3 } }
  const runs = [
    { variant: 'lanegate-live', gc: round(30, 20, 1.5, 200, 40) },
    { variant: 'nginx', gc: nginx },
    { variant: 'lanegate-live', gc: round(36, 30, 2.5, 200, 60, false) },
    { variant: 'lanegate-live', gc: round(33, 25, 1, 199, 50) },
    { variant: 'lane-direct' },
  ]
  const summary = summarizeGc([
    { name: 'lane-direct', server: 'lane' },
    { name: 'lanegate-live', server: 'gateway-main', upstream: 'lane' },
    { name: 'nginx', server: 'nginx', upstream: 'lane' },
  ], runs)
  t.same(summary, [
    {
      variant: 'lanegate-live',
      server: 'gateway-main',
      node: true,
      count: { median: 33, min: 30, max: 36 },
      totalMs: { median: 25, min: 20, max: 30 },
      longestMs: { median: 1.5, min: 1, max: 2.5 },
      youngGenerationMB: { median: 16.5, min: 15, max: 18 },
      upstream: { name: 'lane', count: { median: 1, min: 1, max: 1 }, totalMs: { median: 0.5, min: 0.5, max: 0.5 }, longestMs: { median: 0.5, min: 0.5, max: 0.5 } },
      tail: { samples: 599, duringServerGc: 150, serverGcKinds: { minor: 120, major: 30 }, serverByChance: 3.8, duringUpstreamGc: 3 },
      incompleteRounds: 1,
    },
    {
      variant: 'nginx',
      server: 'nginx',
      node: false,
      upstream: { name: 'lane', count: { median: 2, min: 2, max: 2 }, totalMs: { median: 1, min: 1, max: 1 }, longestMs: { median: 0.6, min: 0.6, max: 0.6 } },
      tail: { samples: 20, duringServerGc: 0, serverByChance: 0, duringUpstreamGc: 3 },
      incompleteRounds: 0,
    },
  ], 'a variant without GC figures (not a latency run) is left out')
  const [withoutSize] = summarizeGc([{ name: 'lanegate-live', server: 'gateway-main' }], [
    { variant: 'lanegate-live', gc: round(30, 20, 1.5, 200, 40) },
    { variant: 'lanegate-live', gc: { ...round(30, 20, 1.5, 200, 40), server: { count: 30, totalMs: 20, longestMs: 1.5, complete: true } } },
  ])
  t.equal(withoutSize?.youngGenerationMB, undefined, 'a round that did not report the young generation leaves the size out')
})

t.test('summarizeGc sets each round\'s pauses beside its own p99 − p50', async (t) => {
  const server = (count: number, totalMs: number): RunGc => ({ server: { count, totalMs, longestMs: 2, complete: true }, tail: { samples: 200, duringServerGc: 90, serverByChance: 20 } })
  const latency = (p50: number, p99: number) => ({ requests: 20_000, latencyMs: { p50, p99 } })
  const [gateway, idle, nginx] = summarizeGc([
    { name: 'lanegate-live', server: 'gateway-main' },
    { name: 'never-paused', server: 'lane' },
    { name: 'nginx', server: 'nginx' },
  ], [
    { variant: 'lanegate-live', gc: server(198, 98.01), result: latency(0.282, 0.861) },
    { variant: 'lanegate-live', gc: server(220, 110), result: latency(0.3, 1.1) },
    { variant: 'lanegate-live', gc: server(190, 76), result: latency(0.25, 0.7) },
    { variant: 'never-paused', gc: server(0, 0), result: latency(0.1, 0.2) },
    { variant: 'nginx', gc: { server: null, tail: { samples: 200, duringServerGc: 0, serverByChance: 0 } }, result: latency(0.17, 0.31) },
  ])
  t.same(gateway?.pauseAgainstSpread, {
    pausesPer100Requests: { median: 0.99, min: 0.95, max: 1.1 },
    meanPauseMs: { median: 0.495, min: 0.4, max: 0.5 },
    p99MinusP50Ms: { median: 0.579, min: 0.45, max: 0.8 },
  })
  t.equal(idle?.pauseAgainstSpread, undefined, 'a server that never paused has no mean pause')
  t.equal(nginx?.pauseAgainstSpread, undefined, 'not Node: no pauses to set beside it')
  const [older] = summarizeGc([{ name: 'lanegate-live', server: 'gateway-main' }], [
    { variant: 'lanegate-live', gc: server(198, 98), result: latency(0.28, 0.86) },
    { variant: 'lanegate-live', gc: server(198, 98) },
  ])
  t.equal(older?.pauseAgainstSpread, undefined, 'a round without its load result leaves the figures out')
})
