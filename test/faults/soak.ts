import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
// sleep: only until the next scheduled reload or sample (a soak is a schedule over wall-clock time).
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'
import type { HeapProbeLine } from './heap-probe.js'
import { steadyLoad, totalByStatus, type LoadRequest } from './load.js'

export interface SoakSample {
  atS: number
  rssMb: number
  /** V8 heap in use right after a full GC (heap-probe.ts), MB: what the leak verdict reads. */
  heapMb: number
  /** External memory (Buffers, …) after that GC, MB. */
  externalMb: number
  fds: number
  /** nodejs_eventloop_lag_p99_seconds from the admin /metrics, in ms (prom-client resets it at each scrape). */
  loopP99Ms: number
}

export interface SoakResult {
  minutes: number
  sent: number
  byStatus: Record<string, number>
  reloads: number
  samples: SoakSample[]
  /** Reloads the gateway logged as applied. */
  reloadsApplied: number
  /**
   * Heap after GC: the last sample at most 10 % above the baseline (see `heapBaseline`); open descriptors: the last
   * at most 10 % above the first. RSS is reported, not judged (see heap-probe.ts).
   */
  flat: { heap: boolean, fds: boolean }
  /** The heap sample the last one was compared with. */
  heapBaselineAtS: number | undefined
}

function rssMb (pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? ''
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024
}

async function loopP99Ms (admin: string | undefined): Promise<number> {
  if (admin === undefined) return NaN
  const text = await fetch(`${admin}/metrics`).then((r) => r.text(), () => '')
  const m = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text)
  return m === null ? NaN : Number(m[1]) * 1000
}

/** No growth beyond 10 % (a drop, the collector giving memory back, is not a leak). */
const within10 = (first: number, last: number): boolean => last <= first * 1.1

/**
 * The heap sample the last one is compared with: the first taken after the first reload (at 60 s) and after half
 * the run, else the first. Before it the heap grows once and then stops, which is not a leak: the first reload's
 * validators and JIT code, optimised code of the hot paths, and the console's sample ring (one sample a second,
 * 900 kept: about 1 MB once full at 15 minutes). A leak keeps growing through the second half too.
 */
function heapBaseline (samples: SoakSample[], minutes: number): SoakSample | undefined {
  const from = Math.max(90, minutes * 30)
  return samples.find((s) => s.atS >= from) ?? samples[0]
}

/** Asks the gateway's heap probe (SIGUSR2) for its heap after a full GC and waits for the line it appends. */
async function heapAfterGc (pid: number, file: string): Promise<HeapProbeLine> {
  const lines = (): string[] => existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []
  const before = lines().length
  process.kill(pid, 'SIGUSR2')
  const after = await waitFor(() => { const now = lines(); return now.length > before && now }, { what: 'the heap probe\'s line' })
  return JSON.parse(after.at(-1) as string) as HeapProbeLine
}

const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024 * 10) / 10

/**
 * `npm run faults -- --soak-minutes N`: one gateway (SQLite, memory limits) under a moderate mixed load (payments
 * config reads, intent creates, content lists) for N minutes, its config reloaded every minute; every 30 s its
 * heap after a full GC (heap-probe.ts, preloaded), RSS, open descriptors and event-loop delay p99. Flat: the last
 * heap at most 10 % above the baseline (`heapBaseline`), the last descriptor count at most 10 % above the first
 * (taken after 30 s of warm-up); lower is flat too.
 */
export async function soak (minutes: number, log: (line: string) => void): Promise<SoakResult> {
  const soakFixture = gatewayFixture().set('server.data_dir', './data')
    .set('rate_limits.payments-per-ip.points', 10000000)
    .set('rate_limits.content-per-client.points', 10000000)
  const cfg = await soakFixture.write()
  const heapFile = join(cfg.dir, 'heap-probe.jsonl')
  const probe = new URL('./heap-probe.js', import.meta.url).href
  const gw = await spawnGateway({
    config: cfg.file,
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --expose-gc --import ${probe}`.trim(), LANEGATE_HEAP_PROBE_FILE: heapFile },
  })
  try {
    const pid = gw.child.pid as number
    const checkout = await fetchGatewayToken(gw.base, 'demo-checkout')
    const content = await fetchGatewayToken(gw.base, 'demo-content')
    let turn = 0
    const load = steadyLoad(4, (): LoadRequest => {
      const kind = turn++ % 3
      if (kind === 0) return { kind: 'config', method: 'GET', url: `${gw.base}/api/v1/ecommerce/config/processor`, headers: { authorization: `Bearer ${checkout}` } }
      if (kind === 1) {
        return {
          kind: 'create', method: 'POST', url: `${gw.base}/api/v1/ecommerce/payment-intents`,
          headers: { authorization: `Bearer ${checkout}`, 'content-type': 'application/json' },
          body: JSON.stringify({ organization_id: 'org_hq_demo', amount: 500, currency: 'usd' }),
        }
      }
      return { kind: 'content', method: 'GET', url: `${gw.base}/public/v1/content`, headers: { authorization: `Bearer ${content}` } }
    })
    const samples: SoakSample[] = []
    const started = Date.now()
    let reloads = 0
    let nextReload = started + 60_000
    let nextSample = started + 30_000
    const end = started + minutes * 60_000
    while (Date.now() < end) {
      await sleep(Math.max(0, Math.min(nextReload, nextSample, end) - Date.now()))
      if (Date.now() >= nextSample) {
        const atS = Math.round((Date.now() - started) / 1000)
        // RSS before the probe's GC (as the process runs); the delay p99 before it too (its window then holds the GC).
        const rss = Math.round(rssMb(pid) * 10) / 10
        const loop = Math.round(await loopP99Ms(gw.admin) * 10) / 10
        const heap = await heapAfterGc(pid, heapFile)
        const sample = { atS, rssMb: rss, heapMb: mb(heap.heapUsed), externalMb: mb(heap.external), fds: readdirSync(`/proc/${pid}/fd`).length, loopP99Ms: loop }
        samples.push(sample)
        log(`soak ${sample.atS} s: heap after GC ${sample.heapMb} MB (external ${sample.externalMb} MB), RSS ${sample.rssMb} MB, ${sample.fds} fds, event-loop delay p99 ${sample.loopP99Ms} ms`)
        nextSample += 30_000
      }
      if (Date.now() >= nextReload) {
        // An edit the watcher applies (a 2nd-line comment changes nothing else): a real reload, every minute.
        reloads += 1
        await cfg.write(soakFixture.set('server.keep_alive_timeout_ms', 5000 + reloads))
        nextReload += 60_000
      }
    }
    const result = await load.stop()
    const first = samples[0]
    const last = samples.at(-1)
    const baseline = heapBaseline(samples, minutes)
    return {
      minutes,
      sent: result.sent,
      byStatus: totalByStatus(result.counts),
      reloads,
      reloadsApplied: (gw.output().match(/"msg":"config reloaded"/g) ?? []).length,
      samples,
      flat: { heap: baseline !== undefined && last !== undefined && within10(baseline.heapMb, last.heapMb), fds: first !== undefined && last !== undefined && within10(first.fds, last.fds) },
      heapBaselineAtS: baseline?.atS,
    }
  } finally {
    gw.child.kill('SIGKILL')
    await gw.exited
    await cfg.remove()
  }
}
