import { setTimeout as sleep } from 'node:timers/promises'
import type { MirrorMeasurement, ScenarioResult } from './result-types.js'
import type { RunLog } from './run-scenario.js'
import type { ScenarioPlan } from './scenarios.js'
import type { ServerSet } from './servers.js'
import { MIRRORED_ROUTE } from './proxy-groups-config.js'
import { BENCH_MIRROR, MIRROR_DELAY_MS } from './mirror-settings.js'

/** One counter of Prometheus text: the sum of the samples whose line starts with `prefix` (0 when none). */
function counter (metrics: string, prefix: string): number {
  let sum = 0
  for (const line of metrics.split('\n')) {
    if (line.startsWith(prefix)) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

/**
 * What the gateway's /metrics say of the pricing block's mirror: requests the mirrored route answered (every
 * status), and its copies sent and dropped by reason (`lanegate_upstream_mirror_requests_total`, counted per block;
 * in this scenario only that route mirrors).
 */
export function mirrorCounters (metrics: string): Pick<MirrorMeasurement, 'requests' | 'sent' | 'droppedInFlight' | 'droppedBodyTooLarge'> {
  const mirror = (result: string): number => counter(metrics, `lanegate_upstream_mirror_requests_total{service="pricing",result="${result}"}`)
  return {
    requests: counter(metrics, `lanegate_http_requests_total{service="pricing",route="${MIRRORED_ROUTE}",`),
    sent: mirror('sent'),
    droppedInFlight: mirror('dropped_in_flight'),
    droppedBodyTooLarge: mirror('dropped_body_too_large'),
  }
}

/**
 * The proxy-mirror scenario's counts, after its rounds (warm-ups included, as the gateway counts them): once the
 * last copies had the time to be answered, the gateway's mirror counters and the copies the slow lane received.
 */
export async function proxyMirrorChecks (result: ScenarioResult, plan: ScenarioPlan, servers: ServerSet, log: RunLog): Promise<void> {
  const gateway = plan.variants.find((v) => v.role === 'subject')?.server
  if (gateway?.adminUrl === undefined) throw new Error('proxy-mirror: the mirrored gateway has no admin listener')
  await sleep(MIRROR_DELAY_MS + 1000)
  const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text()
  const slow = await servers.lane('lane-slow')
  const { mirrored } = await (await fetch(`${slow.url}/__bench/counts`)).json() as { mirrored: number }
  const measured: MirrorMeasurement = { percent: BENCH_MIRROR.percent, maxInFlight: BENCH_MIRROR.maxInFlight, delayMs: MIRROR_DELAY_MS, ...mirrorCounters(metrics), received: mirrored }
  const offered = measured.sent + measured.droppedInFlight + measured.droppedBodyTooLarge
  log.progress(`[proxy-mirror] ${measured.requests} mirrored-route requests: ${offered} copies offered (${(offered / measured.requests * 100).toFixed(2)} %, percent ${measured.percent}); ` +
    `${measured.sent} sent, ${measured.droppedInFlight} dropped in flight, ${measured.droppedBodyTooLarge} dropped for size; the slow lane received ${measured.received}`)
  result.mirror = measured
}
