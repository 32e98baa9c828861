import { readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { sample, scrape } from '../helpers/prometheus.js'
import { waitFor } from '../helpers/wait-for.js'

/** The process's resident set in bytes (Linux /proc). */
async function rss (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

/**
 * `connections` loops of GETs until `stop()`: every status, how many were sent, and how many were answered while
 * `holding()` was true (the collector held an export unanswered: a request waiting on the exporter would wait too).
 */
function load (url: string, connections: number, holding: () => boolean): { sent: () => number, stop: () => Promise<{ statuses: Map<number, number>, sent: number, answeredWhileHeld: number }> } {
  let running = true
  const statuses = new Map<number, number>()
  let sent = 0
  let answeredWhileHeld = 0
  const loops = Array.from({ length: connections }, async () => {
    while (running) {
      const heldBefore = holding()
      const res = await fetch(url)
      await res.arrayBuffer()
      if (heldBefore && holding()) answeredWhileHeld++
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      sent++
    }
  })
  return { sent: () => sent, stop: async () => { running = false; await Promise.all(loops); return { statuses, sent, answeredWhileHeld } } }
}

t.test('a collector refusing, then hanging, under load: requests unaffected, RSS bounded, drops counted, then export resumes; shutdown within its grace', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  receiver.answering(false)
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-dead-collector-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const fixture = gatewayFixture().set('telemetry', { traces: { endpoint: receiver.url, max_queue: 256, batch_size: 64 } })
  const started = await fixture.start(t, { env: { LANEGATE_LOG_LEVEL: 'info', LANEGATE_DATA_DIR: join(dir, 'data') } })
  const gateway = started.gateway
  const pid = gateway.child.pid ?? 0
  const admin = gateway.admin ?? ''
  const held = (): boolean => receiver.held > 0

  // Warm up, then measure RSS while the collector refuses everything.
  const warm = load(`${gateway.base}/healthz`, 4, held)
  await waitFor(() => receiver.requests > 0, { what: 'the first (refused) export' })
  const warmed = await warm.stop()
  const rssBefore = await rss(pid)
  const refusing = load(`${gateway.base}/healthz`, 8, held)
  // Many times the queue's bound dropped, over several refused exports: the queue stayed bounded all along.
  const exportsBefore = receiver.requests
  await waitFor(async () => receiver.requests >= exportsBefore + 5 && sample(await scrape(admin), 'lanegate_traces_dropped_total') >= 8 * 256, { what: 'spans dropped past the queue while the collector refuses', intervalMs: 250 })
  const rssDuring = await rss(pid)
  const refused = await refusing.stop()
  const dropped = sample(await scrape(admin), 'lanegate_traces_dropped_total')

  // A collector that takes the export requests and never answers: requests go on while exports hang.
  receiver.holding(true)
  const hanging = load(`${gateway.base}/healthz`, 8, held)
  await waitFor(() => receiver.held > 0, { what: 'an export request held by the collector' })
  const sentWhenHeld = hanging.sent()
  await waitFor(() => hanging.sent() >= sentWhenHeld + 200 || receiver.held === 0, { what: 'requests answered while an export hangs' })
  const during = await hanging.stop()
  receiver.holding(false)
  receiver.answering(true)
  const spansBefore = receiver.spans.length
  await (await fetch(`${gateway.base}/healthz`)).arrayBuffer()
  await waitFor(() => receiver.spans.length > spansBefore, { what: 'spans exported once the collector answers again' })

  t.same([...warmed.statuses.keys(), ...refused.statuses.keys(), ...during.statuses.keys()].filter((s) => s !== 200), [], 'every request answered 200')
  t.ok(during.answeredWhileHeld >= 100, `${during.answeredWhileHeld} requests answered while the collector held an export unanswered: none waits for the exporter`)
  // A runaway guard only: under this load the process's RSS grows some tens of MB on its own (young generation,
  // compiled code). That the queue holds no more than its bound is shown by the drop count.
  t.ok(rssDuring - rssBefore < 128 * 1024 * 1024, `RSS grew ${Math.round((rssDuring - rssBefore) / 1024 / 1024)} MB while the collector refused (queue of 256 spans)`)
  // Nearly every span of the refusing phase is dropped and counted: at most the queue (256) and the batches in
  // flight were kept.
  t.ok(dropped >= 0.8 * refused.sent, `${dropped} spans counted as dropped of ${refused.sent} requests`)

  const stopping = Date.now()
  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0, 'the drain finished (the exporter\'s flush is bounded), exit 0')
  t.comment(`stopped in ${Date.now() - stopping} ms`)
})
