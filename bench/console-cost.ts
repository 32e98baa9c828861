import { setTimeout as sleep } from 'node:timers/promises'
import type { LoadResult } from './load-job.js'
import { processTree, threadsRunMicros } from './proc-stat.js'
import type { ConsoleIdle, ConsolePair } from './result-types.js'
import { round, spread, type Spread } from './stats.js'

/**
 * What an open operator console costs the gateway (`--console`, issue 23). The same request runs in the same rounds
 * on two gateways of one config, one with the console closed and one with it open (its admin listener serving, a
 * poller asking two views a second from its own process on the load generator's core); their CPU per request is
 * compared round by round. Then, with no traffic, both gateways' CPU per second is read over the same windows.
 */

/** The suffix of the console-open variant of a subject (`lanegate-auth-get+console`). */
export const CONSOLE_SUFFIX = '+console'
/**
 * The suffix of the control variant: a second gateway of the same config with the console closed too. Two processes
 * of one config differ by a few per cent in CPU per request (JIT and heap layout; the `--compare` runs showed it), so
 * open ÷ closed means something only beside twin ÷ closed, measured in the same rounds.
 */
export const TWIN_SUFFIX = '+closed-twin'

function rounded (s: Spread, digits: number): Spread {
  return { median: round(s.median, digits), min: round(s.min, digits), max: round(s.max, digits) }
}

function perRequest (r: LoadResult): number {
  return r.requests === 0 ? Number.NaN : r.serverCpuMicros / r.requests
}

/**
 * One pair per `<closed>+console` (and `<closed>+closed-twin`) variant whose `<closed>` variant ran too: the two CPU
 * per request figures and their ratio (open ÷ closed), each taken in the rounds where both ran, spread over those rounds.
 */
export function consolePairs (variantNames: readonly string[], rounds: ReadonlyArray<Readonly<Record<string, LoadResult>>>): ConsolePair[] {
  const pairs: ConsolePair[] = []
  for (const open of variantNames) {
    const suffix = [CONSOLE_SUFFIX, TWIN_SUFFIX].find((s) => open.endsWith(s))
    if (suffix === undefined) continue
    const closed = open.slice(0, -suffix.length)
    if (!variantNames.includes(closed)) continue
    const both = rounds.flatMap((r) => {
      const a = r[open]
      const b = r[closed]
      return a === undefined || b === undefined ? [] : [[perRequest(a), perRequest(b)] as const]
    })
    pairs.push({
      open,
      closed,
      rounds: both.length,
      openCpuUsPerRequest: rounded(spread(both.map(([a]) => a)), 1),
      closedCpuUsPerRequest: rounded(spread(both.map(([, b]) => b)), 1),
      cpuRatio: rounded(spread(both.map(([a, b]) => a / b)), 3),
    })
  }
  return pairs
}

/** The pids whose CPU is read for a gateway: its process tree, which must not hold the poller. */
export function gatewayTreeWithout (gatewayPid: number, pollerPid: number): number[] {
  const tree = processTree(gatewayPid)
  if (tree.includes(pollerPid)) throw new Error(`the console poller (pid ${pollerPid}) is in the gateway's process tree (pid ${gatewayPid}): its CPU would be billed to the gateway`)
  return tree
}

/**
 * With no traffic, `windows` windows of `seconds` each: the CPU per second of the gateway with the console open and
 * of the one with it closed (read over the same windows), and the poller's own for reference. Read from the
 * threads' schedstat (ns), not /proc/<pid>/stat's 10 ms ticks: idle figures are a few ms a second. Each is one
 * process (the poller is checked to be outside the open gateway's tree).
 */
export async function measureIdle (pids: { open: number, closed: number, poller: number }, windows: number, seconds: number): Promise<ConsoleIdle> {
  gatewayTreeWithout(pids.open, pids.poller)
  const open: number[] = []
  const closed: number[] = []
  const poller: number[] = []
  for (let w = 0; w < windows; w++) {
    const before = { open: threadsRunMicros(pids.open), closed: threadsRunMicros(pids.closed), poller: threadsRunMicros(pids.poller), at: performance.now() }
    await sleep(seconds * 1000)
    const wall = (performance.now() - before.at) / 1000
    open.push((threadsRunMicros(pids.open) - before.open) / wall)
    closed.push((threadsRunMicros(pids.closed) - before.closed) / wall)
    poller.push((threadsRunMicros(pids.poller) - before.poller) / wall)
  }
  return {
    windows,
    seconds,
    openCpuUsPerSecond: rounded(spread(open), 0),
    closedCpuUsPerSecond: rounded(spread(closed), 0),
    pollerCpuUsPerSecond: rounded(spread(poller), 0),
  }
}
