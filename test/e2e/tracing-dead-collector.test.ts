import { readFile } from 'node:fs/promises'
import t from 'tap'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { sample, scrape } from '../helpers/prometheus.js'
import { waitFor } from '../helpers/wait-for.js'

/** The process's resident set in bytes (Linux /proc). */
async function rss (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

/** `connections` loops of GETs until `stop()`: every status and the slowest answer. */
function load (url: string, connections: number): { stop: () => Promise<{ statuses: Map<number, number>, slowestMs: number, sent: number }> } {
  let running = true
  const statuses = new Map<number, number>()
  let slowestMs = 0
  let sent = 0
  const loops = Array.from({ length: connections }, async () => {
    while (running) {
      const started = performance.now()
      const res = await fetch(url)
      await res.arrayBuffer()
      slowestMs = Math.max(slowestMs, performance.now() - started)
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      sent++
    }
  })
  return { stop: async () => { running = false; await Promise.all(loops); return { statuses, slowestMs, sent } } }
}

t.test('a collector refusing under load: requests unaffected, RSS bounded, drops counted, then export resumes; shutdown within its grace', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  receiver.answering(false)
  const traced = gatewayFixture().set('telemetry', { traces: { endpoint: receiver.url, max_queue: 256, batch_size: 64 } })
  const { gateway } = await traced.start(t, { env: { LANEGATE_LOG_LEVEL: 'info' } })
  const pid = gateway.child.pid ?? 0
  const admin = gateway.admin ?? ''

  // Warm up, then measure RSS while the collector refuses everything.
  const warm = load(`${gateway.base}/healthz`, 4)
  await waitFor(() => receiver.requests > 0, { what: 'the first (refused) export' })
  const warmed = await warm.stop()
  const rssBefore = await rss(pid)
  const refusing = load(`${gateway.base}/healthz`, 8)
  // The refusing phase lasts until the 256-span queue has overflowed twice over (counted drops), not a set time.
  await waitFor(async () => sample(await scrape(admin), 'lanegate_traces_dropped_total') >= 2 * 256, { what: 'two queues of spans dropped under load', intervalMs: 250 })
  const rssDuring = await rss(pid)
  receiver.answering(true)
  const spansBefore = receiver.spans.length
  await waitFor(() => receiver.spans.length > spansBefore, { what: 'spans exported once the collector answers again' })
  const during = await refusing.stop()

  t.same([...warmed.statuses.keys(), ...during.statuses.keys()].filter((s) => s !== 200), [], 'every request answered 200')
  t.ok(during.sent > 100, `${during.sent} requests under load`)
  t.ok(during.slowestMs < 8_000, `no request waited for the collector (slowest ${Math.round(during.slowestMs)} ms; an export may take 10 s)`)
  // A runaway guard only: under this load the process's RSS grows some tens of MB on its own (young generation,
  // compiled code). That the queue holds no more than its bound is shown by the drop count below.
  t.ok(rssDuring - rssBefore < 128 * 1024 * 1024, `RSS grew ${Math.round((rssDuring - rssBefore) / 1024 / 1024)} MB while the collector refused (queue of 256 spans)`)
  const dropped = sample(await scrape(admin), 'lanegate_traces_dropped_total')
  // Nearly every span of the refusing phase is dropped and counted: at most the queue (256) and the batches in
  // flight were kept, and the requests after the collector answered again are few.
  t.ok(dropped >= 0.8 * during.sent, `${dropped} spans counted as dropped of ${during.sent} requests`)

  const stopping = Date.now()
  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0, 'the drain finished (the exporter\'s flush is bounded), exit 0')
  t.comment(`stopped in ${Date.now() - stopping} ms`)
})
