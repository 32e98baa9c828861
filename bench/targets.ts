import type { ScenarioResult, TargetCheck } from './result-types.js'
import type { LoadResult } from './load-job.js'
import { round, spread, type Spread } from './stats.js'
import { CONSOLE_SUFFIX, TWIN_SUFFIX } from './console-cost.js'
import { LOADGEN_SATURATION } from './summary.js'
import { cpuPerRequest, perRound, perRoundOf } from './round-pairs.js'
import { telemetryChecks } from './telemetry-targets.js'

/**
 * The targets (ratios from one run on the 2-core box). Issue 16 restated two of issue 6's: auth-get is held
 * against bare fastify sending the same answer (the hello-world ratio stays reported), and the c=1 tail against
 * nginx's in the same rounds (the absolute 0.3 ms stays reported), because both old goals sat at the shared VM's
 * noise level (docs/performance.md).
 */
export const TARGETS = {
  /** Issue 22: messages/s echoed through the live proxy ÷ the lane direct, same rounds. */
  websocketRatio: 0.5,
  /** Issue 22: RSS of 10,000 idle WebSockets above an idle gateway. */
  websocketIdleRssBytes: 150 * 1024 * 1024,
  /** config-push: every instance applies a push within this (ms). */
  configPushMaxMs: 2000,
  /** Reported only since issue 16 (see authGetSameResponseRatio). */
  authGetRatio: 0.80,
  /** Issue 16: auth-get ÷ `fastify-same-response` (same body and headers), same rounds: a floor. */
  authGetSameResponseRatio: 0.85,
  /**
   * Issue 16: the auth-get request with Redis limits ÷ the same with memory limits, same rounds. Held by the
   * pre-counting variant (`sync_interval_ms: 50`); the exact variant (a round trip per request) is reported.
   */
  authGetRedisRatio: 0.6,
  liveProxyRatio: 0.15,
  /** Issue 45: the live relay's gateway CPU per request at most this multiple of nginx's, same rounds. */
  liveCpuOverNginx: 3.5,
  /** Issue 45: the live relay's CPU per request at most this multiple of the Node floor's (`undici-floor`), same rounds. */
  liveCpuOverFloor: 1.25,
  /** Issue 45: the live relay's heap bytes allocated per request at most this multiple of the Node floor's, same rounds. */
  liveHeapOverFloor: 1.3,
  /** Issue 45: the token endpoint's CPU per request less one signature's at most this multiple of bare fastify's POST. */
  tokenLessSignatureOverPost: 1.5,
  /** Issue 13: the proxy service ÷ its upstream direct, at least the live proxy's target. */
  proxyServiceRatio: 0.15,
  /** Issue 13: with two equal targets each gets 50 % ± this share of the requests. */
  proxySplitTolerance: 0.05,
  /** Issue 41: the proxy service with circuit breakers and a split over two groups ÷ plain, server CPU per request, same rounds. */
  breakerSplitCpuRatio: 1.03,
  /** Issue 41: the mirrored GET's p99 at c=1 ÷ the unmirrored GET's on the same gateway, same rounds (≤ 10 % more). */
  mirrorP99Ratio: 1.10,
  /** Issue 41: copies offered (sent or dropped) within this many percentage points of the mirror's `percent`. */
  mirrorPercentTolerance: 1,
  tokensPerSecond: 5000,
  /** Reported only since issue 16 (see addedP99OverNginxMs). */
  addedP99Ms: 0.3,
  /** Issue 16: the live proxy's added p99 at c=1 at most nginx's added p99 of the same round plus this. */
  addedP99OverNginxMs: 0.2,
  /**
   * Issue 24: the live proxy's added p99 at c=1 at most the best Node peer's (fast-gateway, http-proxy-3) of the
   * same round, plus this (none). p99.9 is held to the same and reported.
   */
  addedP99OverBestNodePeerMs: 0,
  /**
   * Issue 44: the same GET relayed plainly ÷ the proxy service's GET with its answer's JSON fields renamed, by CPU
   * per request, same rounds.
   */
  transformRenameRatio: 0.85,
  /** Issue 44: the plain relay ÷ the same GET as a JSON → SOAP → JSON call, by CPU per request, same rounds. */
  transformSoapRatio: 0.5,
  /** Issue 25: a cached GET through the proxy service ÷ bare fastify hello-world (a hit does no upstream work). */
  cacheHitRatio: 0.6,
  /** Issue 23: the gateway's CPU per request with the console open ÷ with it closed, same rounds (≤ 3 % more). */
  consoleCpuRatio: 1.03,
  /** Issue 21: an authenticated GET over HTTPS keep-alive at least this share of the same over plain HTTP. */
  httpsKeepAliveRatio: 0.9,
  /** Issue 25: the api-key GET's server CPU per request at most this much above auth-get's (same rounds). */
  apiKeyCpuOverAuthGet: 0.10,
  /** Issue 43: auth-get with external-auth answered from its decision cache, server CPU per request over plain auth-get's (same rounds). */
  externalAuthCpuOverAuthGet: 0.10,
  rssBytes: 200 * 1024 * 1024,
  /** "Flat across a soak": the last sample at most this much above the first. */
  soakGrowth: 0.10,
} as const

const MB = 1024 * 1024

/**
 * The metric that decides, named before any run: the server's CPU time per request, with instructions
 * per request (`--instructions`) beside it. Req/s, latency and heap bytes are reported, and some targets are set in
 * them, but a server is cheaper than another when its CPU per request is lower.
 */
export const DECIDING_METRIC = 'server CPU time per request (µs), with instructions per request (`--instructions`) beside it'

/** Compares what a run measured with the targets; a scenario that did not run yields no check. */
export function checkTargets (scenarios: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = []
  const subject = (id: string, name: string) => scenarios.find((s) => s.id === id)?.variants.find((v) => v.name === name)
  const auth = subject('auth-get', 'lanegate-auth-get')
  if (auth !== undefined) {
    checks.push({ scenario: 'auth-get', what: 'authenticated in-process GET ÷ bare fastify', goal: `≥ ${TARGETS.authGetRatio}× (reported)`, measured: `${auth.ratio.median}× (${auth.ratio.min}–${auth.ratio.max})`, met: auth.ratio.median >= TARGETS.authGetRatio, reportOnly: true })
  }
  sameResponseChecks(scenarios, checks)
  const apiKey = subject('auth-get', 'lanegate-api-key-get')
  if (apiKey !== undefined && auth !== undefined) {
    const over = apiKey.serverCpuUsPerRequest.median / auth.serverCpuUsPerRequest.median - 1
    checks.push({ scenario: 'auth-get', what: 'api-key GET server CPU per request over auth-get\'s', goal: `≤ +${TARGETS.apiKeyCpuOverAuthGet * 100} %`, measured: `${(over * 100).toFixed(1)} % (${apiKey.serverCpuUsPerRequest.median} vs ${auth.serverCpuUsPerRequest.median} µs)`, met: over <= TARGETS.apiKeyCpuOverAuthGet })
  }
  externalAuthCheck(scenarios, checks)
  telemetryChecks(scenarios, checks)
  const cached = subject('cache', 'lanegate-proxy-cache-hit')
  if (cached !== undefined) {
    checks.push({ scenario: 'cache', what: 'cached GET through the proxy service ÷ bare fastify', goal: `≥ ${TARGETS.cacheHitRatio}×`, measured: `${cached.ratio.median}× (${cached.ratio.min}–${cached.ratio.max})`, met: cached.ratio.median >= TARGETS.cacheHitRatio })
  }
  transformChecks(scenarios, checks)
  const synced = subject('auth-get-redis', 'lanegate-auth-get-redis-synced')
  if (synced !== undefined) {
    checks.push({ scenario: 'auth-get-redis', what: 'auth-get with Redis limits pre-counted (sync every 50 ms) ÷ with the memory limiter', goal: `≥ ${TARGETS.authGetRedisRatio}×`, measured: `${synced.ratio.median}× (${synced.ratio.min}–${synced.ratio.max})`, met: synced.ratio.median >= TARGETS.authGetRedisRatio })
  }
  const redis = subject('auth-get-redis', 'lanegate-auth-get-redis')
  if (redis !== undefined) {
    checks.push({ scenario: 'auth-get-redis', what: 'auth-get with Redis limits, a round trip per request (exact) ÷ with the memory limiter', goal: `≥ ${TARGETS.authGetRedisRatio}× (reported)`, measured: `${redis.ratio.median}× (${redis.ratio.min}–${redis.ratio.max})`, met: redis.ratio.median >= TARGETS.authGetRedisRatio, reportOnly: true })
  }
  const live = subject('live-proxy', 'lanegate-live')
  if (live !== undefined) {
    checks.push({ scenario: 'live-proxy', what: 'live proxy through the full chain ÷ lane direct', goal: `≥ ${TARGETS.liveProxyRatio}×`, measured: `${live.ratio.median}× (${live.ratio.min}–${live.ratio.max})`, met: live.ratio.median >= TARGETS.liveProxyRatio })
  }
  relayFloorChecks(scenarios, checks)
  const proxy = subject('proxy-service', 'lanegate-proxy-service')
  if (proxy !== undefined) {
    checks.push({ scenario: 'proxy-service', what: 'proxy service through the full chain ÷ one target direct', goal: `≥ ${TARGETS.proxyServiceRatio}×`, measured: `${proxy.ratio.median}× (${proxy.ratio.min}–${proxy.ratio.max})`, met: proxy.ratio.median >= TARGETS.proxyServiceRatio })
  }
  const split = scenarios.find((s) => s.id === 'proxy-service')?.split
  if (split !== undefined && split.length > 0) {
    const total = split.reduce((sum, t) => sum + t.requests, 0)
    const shares = split.map((t) => total === 0 ? 0 : t.requests / total)
    checks.push({
      scenario: 'proxy-service',
      what: `two equal targets: each one's share of ${total} proxied requests`,
      goal: `${50 - TARGETS.proxySplitTolerance * 100}–${50 + TARGETS.proxySplitTolerance * 100} %`,
      measured: split.map((t, i) => `${t.target} ${((shares[i] ?? 0) * 100).toFixed(1)} %`).join(', '),
      met: total > 0 && shares.every((share) => Math.abs(share - 0.5) <= TARGETS.proxySplitTolerance),
    })
  }
  const failover = scenarios.find((s) => s.id === 'proxy-service')?.failover
  if (failover !== undefined) {
    const failed = (r: typeof failover.after): number => r.errors + r.timeouts + r.requests - (r.statusCounts['200'] ?? 0)
    checks.push({
      scenario: 'proxy-service',
      what: 'one of two targets killed mid-run: failed GETs after the first ejection window',
      goal: '0',
      measured: `${failed(failover.after)} of ${failover.after.requests} (during the kill: ${failed(failover.during)} of ${failover.during.requests})`,
      met: failover.after.requests > 0 && failed(failover.after) === 0,
    })
  }
  breakerSplitCheck(scenarios, checks)
  mirrorChecks(scenarios, checks)
  const token = subject('token', 'lanegate-token')
  if (token !== undefined) {
    checks.push({ scenario: 'token', what: 'tokens issued per second, one core, known client', goal: `≥ ${TARGETS.tokensPerSecond}/s`, measured: `${token.rps.median}/s (${token.rps.min}–${token.rps.max})`, met: token.rps.median >= TARGETS.tokensPerSecond })
  }
  tokenLessSignatureCheck(scenarios, checks)
  const latency = subject('latency-c1', 'lanegate-live')
  if (latency?.addedP99Ms !== undefined) {
    checks.push({ scenario: 'latency-c1', what: 'added p99 latency of a proxied request at c=1', goal: `≤ ${TARGETS.addedP99Ms} ms (reported)`, measured: `${latency.addedP99Ms.median} ms (${latency.addedP99Ms.min}–${latency.addedP99Ms.max})`, met: latency.addedP99Ms.median <= TARGETS.addedP99Ms, reportOnly: true })
  }
  // Both added p99s are taken against the same round's lane direct, so their difference is the two p99s'.
  const overNginx = perRound(scenarios, 'latency-c1', 'lanegate-live', 'nginx', (gw, peer) => gw.latencyMs.p99 - peer.latencyMs.p99)
  if (overNginx !== undefined) {
    checks.push({ scenario: 'latency-c1', what: 'added p99 at c=1 of the live proxy minus nginx\'s, same rounds', goal: `≤ ${TARGETS.addedP99OverNginxMs} ms`, measured: spreadText(overNginx, ' ms'), met: overNginx.median <= TARGETS.addedP99OverNginxMs })
  }
  for (const [quantile, label, reportOnly] of [['p99', 'p99', false], ['p999', 'p99.9', true]] as const) {
    const against = againstBestNodePeer(scenarios, (r) => r.latencyMs[quantile])
    if (against === undefined) continue
    const { difference, ours, best, bestBy } = against
    checks.push({
      scenario: 'latency-c1',
      what: `added ${label} at c=1 of the live proxy minus the best Node peer's (${NODE_PEERS.join(', ')}), same rounds`,
      goal: `≤ ${TARGETS.addedP99OverBestNodePeerMs} ms${reportOnly ? ' (reported)' : ''}`,
      measured: `${spreadText(difference, ' ms')}; added ${label}: lanegate ${spreadText(ours, ' ms')}, best Node peer ${spreadText(best, ' ms')} (${Object.entries(bestBy).map(([peer, n]) => `${peer} best in ${n}`).join(', ')} of ${difference.rounds} rounds)`,
      met: difference.median <= TARGETS.addedP99OverBestNodePeerMs,
      ...(reportOnly ? { reportOnly } : {}),
    })
  }
  const tls = scenarios.find((s) => s.id === 'tls')
  const https = tls?.variants.find((v) => v.name === 'lanegate-auth-get-https')
  if (https !== undefined && Number.isFinite(https.ratio.median)) {
    // CPU per request within each round, plain ÷ HTTPS, for lanegate and for nginx (whose own TLS cost is the yardstick).
    const ours = perRound(scenarios, 'tls', 'lanegate-auth-get-https', 'lanegate-auth-get', (a, b) => cpuPerRequest(b) / cpuPerRequest(a))
    const nginxRatio = perRound(scenarios, 'tls', 'nginx-https', 'nginx', (a, b) => a.rps / b.rps)
    const nginxCpu = perRound(scenarios, 'tls', 'nginx-https', 'nginx', (a, b) => cpuPerRequest(b) / cpuPerRequest(a))
    const beside = nginxRatio === undefined || nginxCpu === undefined
      ? ''
      : `; nginx's HTTPS ÷ plain, same rounds: ${round3(nginxRatio.median)}× (CPU per request ${round3(nginxCpu.median)}×)`
    checks.push({
      scenario: 'tls',
      what: 'authenticated GET over HTTPS keep-alive ÷ over plain HTTP, same rounds',
      goal: `≥ ${TARGETS.httpsKeepAliveRatio}×`,
      measured: `${round3(https.ratio.median)}× (${round3(https.ratio.min)}–${round3(https.ratio.max)}${ours === undefined ? '' : `; CPU per request ${round3(ours.median)}×`})${beside}`,
      met: https.ratio.median >= TARGETS.httpsKeepAliveRatio,
    })
  }
  for (const scenario of scenarios) {
    for (const pair of scenario.console?.pairs ?? []) {
      if (!pair.open.endsWith(CONSOLE_SUFFIX)) continue
      const twin = scenario.console?.pairs.find((p) => p.closed === pair.closed && p.open.endsWith(TWIN_SUFFIX))
      checks.push({
        scenario: scenario.id,
        what: `gateway CPU per request with the console open ÷ closed (${pair.closed}), same rounds`,
        goal: `≤ ${TARGETS.consoleCpuRatio}×`,
        measured: `${pair.cpuRatio.median}× (${pair.cpuRatio.min}–${pair.cpuRatio.max}; ${pair.openCpuUsPerRequest.median} vs ${pair.closedCpuUsPerRequest.median} µs)${twin === undefined ? '' : `; a second closed gateway ÷ closed: ${twin.cpuRatio.median}× (${twin.cpuRatio.min}–${twin.cpuRatio.max})`}`,
        met: pair.cpuRatio.median <= TARGETS.consoleCpuRatio,
      })
    }
  }
  const memory = scenarios.find((s) => s.id === 'memory')?.memory
  if (memory !== undefined) {
    checks.push({ scenario: 'memory', what: `RSS after ${memory.requests} requests with ${memory.tokens} distinct tokens`, goal: `≤ ${TARGETS.rssBytes / MB} MB (at 1M requests / 100k tokens)`, measured: `${(memory.rssAfterRequests / MB).toFixed(1)} MB (peak ${(memory.peakRss / MB).toFixed(1)} MB)`, met: memory.rssAfterRequests <= TARGETS.rssBytes })
    const soak = memory.soak
    if (soak !== undefined && soak.samples.length > 1) {
      const first = soak.samples[0]?.rss ?? 0
      const last = soak.samples[soak.samples.length - 1]?.rss ?? 0
      const highest = Math.max(...soak.samples.map((sample) => sample.rss))
      checks.push({
        scenario: 'memory',
        what: `RSS flat across a ${soak.minutes}-minute soak`,
        goal: `last ≤ first + ${TARGETS.soakGrowth * 100}%, all ≤ ${TARGETS.rssBytes / MB} MB`,
        measured: `${(first / MB).toFixed(1)} → ${(last / MB).toFixed(1)} MB (highest ${(highest / MB).toFixed(1)} MB)`,
        met: last <= first * (1 + TARGETS.soakGrowth) && highest <= TARGETS.rssBytes,
      })
    }
  }
  const websocket = scenarios.find((s) => s.id === 'websocket')?.websocket
  if (websocket !== undefined) {
    const gateway = websocket.variants.find((v) => v.name === 'lanegate-live')
    const nginx = websocket.variants.find((v) => v.name === 'nginx')
    if (gateway !== undefined && Number.isFinite(gateway.ratio.median)) {
      checks.push({ scenario: 'websocket', what: 'messages/s echoed through the live proxy ÷ the lane direct', goal: `≥ ${TARGETS.websocketRatio}×`, measured: spreadText(gateway.ratio, '×'), met: gateway.ratio.median >= TARGETS.websocketRatio })
      if (nginx !== undefined && Number.isFinite(nginx.ratio.median)) {
        checks.push({ scenario: 'websocket', what: 'the live proxy\'s ratio against nginx\'s ratio ÷ 2', goal: '> nginx ÷ 2', measured: `${round3(gateway.ratio.median)} vs ${round3(nginx.ratio.median / 2)}`, met: gateway.ratio.median > nginx.ratio.median / 2 })
      }
    }
    const added = websocket.rssWithIdleConnections - websocket.rssIdleGateway
    checks.push({ scenario: 'websocket', what: `RSS of ${websocket.idleConnections} idle WebSockets above an idle gateway`, goal: `≤ ${TARGETS.websocketIdleRssBytes / MB} MB at 10,000`, measured: `${(added / MB).toFixed(1)} MB`, met: added <= TARGETS.websocketIdleRssBytes * (websocket.idleConnections / 10_000) })
  }
  const configPush = scenarios.find((s) => s.id === 'config-push')?.configPush
  if (configPush !== undefined) {
    checks.push({ scenario: 'config-push', what: `push to applied, max over ${configPush.instances.length} instances and ${configPush.pushes} pushes`, goal: `≤ ${TARGETS.configPushMaxMs} ms`, measured: `${configPush.overall.maxMs} ms (p50 ${configPush.overall.p50Ms} ms)`, met: configPush.overall.maxMs <= TARGETS.configPushMaxMs })
  }
  return checks
}

/**
 * Issue 16's auth-get goal, round by round: the gateway's req/s ÷ bare fastify's sending the same answer. In a round
 * where the load generator saturated its core for either side, both sides' req/s are the load generator's, and
 * their ratio tells nothing about the servers: that round is taken by CPU per request instead (fastify's ÷ the
 * gateway's, the ratio a CPU-bound server would show), and the line says how many rounds were. The ratio by CPU
 * per request over all rounds is reported beside it.
 */
function sameResponseChecks (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  let byCpu = 0
  let rounds = 0
  const judged = perRound(scenarios, 'auth-get', 'lanegate-auth-get', 'fastify-same-response', (gw, peer) => {
    rounds++
    if (Math.max(gw.loadgenCpu, peer.loadgenCpu) < LOADGEN_SATURATION) return gw.rps / peer.rps
    byCpu++
    return cpuPerRequest(peer) / cpuPerRequest(gw)
  })
  if (judged === undefined) return
  const note = byCpu === 0 ? '' : `; ${byCpu} of ${rounds} rounds by CPU per request (the load generator saturated its core)`
  checks.push({ scenario: 'auth-get', what: 'authenticated in-process GET ÷ bare fastify sending the same answer', goal: `≥ ${TARGETS.authGetSameResponseRatio}×`, measured: spreadText(judged, '×') + note, met: judged.median >= TARGETS.authGetSameResponseRatio })
  const cpu = perRound(scenarios, 'auth-get', 'lanegate-auth-get', 'fastify-same-response', (gw, peer) => cpuPerRequest(peer) / cpuPerRequest(gw))
  if (cpu !== undefined) {
    checks.push({ scenario: 'auth-get', what: 'the same, by CPU per request (fastify\'s ÷ the gateway\'s)', goal: `≥ ${TARGETS.authGetSameResponseRatio}× (reported)`, measured: spreadText(cpu, '×'), met: cpu.median >= TARGETS.authGetSameResponseRatio, reportOnly: true })
  }
}

/**
 * Issue 43's goal: auth-get with external-auth answered from its decision cache, its server CPU per request over
 * plain auth-get's, paired within each round (two medians alone may come from different rounds); beside it the
 * twin, a second plain process, as the control.
 */
function externalAuthCheck (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  const cpu: { asking: number[], plain: number[] } = { asking: [], plain: [] }
  const over = perRound(scenarios, 'external-auth', 'lanegate-auth-get-external-auth', 'lanegate-auth-get', (asking, plain) => {
    cpu.asking.push(cpuPerRequest(asking))
    cpu.plain.push(cpuPerRequest(plain))
    return cpuPerRequest(asking) / cpuPerRequest(plain) - 1
  })
  if (over === undefined) return
  const twin = perRound(scenarios, 'external-auth', 'lanegate-auth-get-twin', 'lanegate-auth-get', (a, b) => cpuPerRequest(a) / cpuPerRequest(b) - 1)
  const percent = (value: number): string => (value * 100).toFixed(1)
  const us = (values: number[]): number => round(spread(values).median, 1)
  const control = twin === undefined ? '' : `; a second plain process: ${percent(twin.median)} %`
  checks.push({
    scenario: 'external-auth',
    what: 'auth-get with external-auth (decision cache hit) server CPU per request over plain auth-get\'s, same rounds',
    goal: `≤ +${TARGETS.externalAuthCpuOverAuthGet * 100} %`,
    measured: `${percent(over.median)} % (${percent(over.min)}…${percent(over.max)} %; ${us(cpu.asking)} vs ${us(cpu.plain)} µs${control})`,
    met: over.median <= TARGETS.externalAuthCpuOverAuthGet,
  })
}

/**
 * Issue 41's relay goal: the proxy service with a circuit breaker per target and a sticky split over two groups,
 * its server CPU per request ÷ the plain block's, paired within each round; beside it the twin (a second plain
 * process) ÷ plain, the control.
 */
function breakerSplitCheck (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  const cpu: { split: number[], plain: number[] } = { split: [], plain: [] }
  const ratio = perRound(scenarios, 'proxy-service', 'lanegate-proxy-breaker-split', 'lanegate-proxy-service', (split, plain) => {
    cpu.split.push(cpuPerRequest(split))
    cpu.plain.push(cpuPerRequest(plain))
    return cpuPerRequest(split) / cpuPerRequest(plain)
  })
  if (ratio === undefined) return
  const twin = perRound(scenarios, 'proxy-service', 'lanegate-proxy-service-twin', 'lanegate-proxy-service', (a, b) => cpuPerRequest(a) / cpuPerRequest(b))
  const us = (values: number[]): number => round(spread(values).median, 1)
  checks.push({
    scenario: 'proxy-service',
    what: 'proxy service with circuit breakers and a split over two groups ÷ plain, server CPU per request, same rounds',
    goal: `≤ ${TARGETS.breakerSplitCpuRatio}×`,
    measured: `${spreadText(ratio, '×')}; ${us(cpu.split)} vs ${us(cpu.plain)} µs${twin === undefined ? '' : `; a second plain process ÷ plain: ${spreadText(twin, '×')}`}`,
    met: ratio.median <= TARGETS.breakerSplitCpuRatio,
  })
}

/**
 * Issue 41's mirror goals: the mirrored GET's p99 at c=1 ÷ the unmirrored one's on the same gateway, within each
 * round (p99.9 reported beside it); and the copies the mirror offered (sent, or dropped and counted) as a share of
 * the mirrored route's requests against its `percent`, every copy sent received by the slow lane.
 */
function mirrorChecks (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  const ms: { on: number[], off: number[] } = { on: [], off: [] }
  const p99 = perRound(scenarios, 'proxy-mirror', 'lanegate-proxy-mirrored', 'lanegate-proxy-unmirrored', (on, off) => {
    ms.on.push(on.latencyMs.p99)
    ms.off.push(off.latencyMs.p99)
    return on.latencyMs.p99 / off.latencyMs.p99
  })
  if (p99 !== undefined) {
    const p999 = perRound(scenarios, 'proxy-mirror', 'lanegate-proxy-mirrored', 'lanegate-proxy-unmirrored', (on, off) => on.latencyMs.p999 / off.latencyMs.p999) as Spread
    const median = (values: number[]): number => round3(spread(values).median)
    checks.push({
      scenario: 'proxy-mirror',
      what: 'p99 at c=1 of the GET mirrored to a group answering 2 s late ÷ the same GET unmirrored, same gateway, same rounds',
      goal: `≤ ${TARGETS.mirrorP99Ratio}×`,
      measured: `${spreadText(p99, '×')}; p99 medians ${median(ms.on)} vs ${median(ms.off)} ms; p99.9 ${spreadText(p999, '×')}`,
      met: p99.median <= TARGETS.mirrorP99Ratio,
    })
  }
  const mirror = scenarios.find((s) => s.id === 'proxy-mirror')?.mirror
  if (mirror === undefined) return
  const offered = mirror.sent + mirror.droppedInFlight + mirror.droppedBodyTooLarge
  const share = mirror.requests === 0 ? Number.NaN : offered / mirror.requests * 100
  checks.push({
    scenario: 'proxy-mirror',
    what: `copies offered (sent or dropped) of ${mirror.requests} mirrored requests, and every copy sent received`,
    goal: `${mirror.percent} % ± ${TARGETS.mirrorPercentTolerance}; received = sent`,
    measured: `${share.toFixed(2)} %: ${mirror.sent} sent, ${mirror.droppedInFlight} dropped in flight (at most ${mirror.maxInFlight}), ${mirror.droppedBodyTooLarge} for size; ${mirror.received} received`,
    met: Math.abs(share - mirror.percent) <= TARGETS.mirrorPercentTolerance && mirror.received === mirror.sent,
  })
}

/**
 * Issue 44's goals by the deciding metric, within each round: the plain relay's CPU per request ÷ the transformed
 * GET's (what share of the plain relay's rate a CPU-bound gateway keeps); the req/s ratio reported beside it.
 */
function transformChecks (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  const goals = [
    ['lanegate-transform-rename', 'GET with the answer\'s JSON fields renamed', TARGETS.transformRenameRatio],
    ['lanegate-transform-soap', 'GET as a JSON → SOAP → JSON call', TARGETS.transformSoapRatio],
  ] as const
  for (const [name, what, goal] of goals) {
    const rps: number[] = []
    const byCpu = perRound(scenarios, 'transform', name, 'lanegate-proxy-plain', (transformed, plain) => {
      rps.push(transformed.rps / plain.rps)
      return cpuPerRequest(plain) / cpuPerRequest(transformed)
    })
    if (byCpu === undefined) continue
    checks.push({
      scenario: 'transform',
      what: `${what}: the plain relay's CPU per request ÷ its own (same gateway), same rounds`,
      goal: `≥ ${goal}×`,
      measured: `${spreadText(byCpu, '×')}; by req/s ${spreadText(spread(rps), '×')}`,
      met: byCpu.median >= goal,
    })
  }
}

/**
 * The live relay by CPU per request within each round: against nginx, and against the Node floor
 * (`undici-floor`: node:http and an undici pool with nothing between them, the engine lanegate relays with), by CPU
 * and by heap bytes allocated; the raw-`net` floor (`net-floor`: no HTTP library at all) reported beside. What the
 * floor costs above nginx is Node's; what lanegate costs above the floor is lanegate's.
 */
function relayFloorChecks (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  const ratio = (subject: string, peer: string, per = cpuPerRequest): Spread | undefined =>
    perRound(scenarios, 'live-proxy', subject, peer, (a, b) => per(a) / per(b))
  const add = (what: string, spread: Spread | undefined, goal: number | undefined): void => {
    if (spread === undefined || !Number.isFinite(spread.median)) return
    if (goal === undefined) checks.push({ scenario: 'live-proxy', what, goal: 'reported', measured: spreadText(spread, '×'), met: true, reportOnly: true })
    else checks.push({ scenario: 'live-proxy', what, goal: `≤ ${goal}×`, measured: spreadText(spread, '×'), met: spread.median <= goal })
  }
  add('live relay\'s gateway CPU per request ÷ nginx\'s, same rounds', ratio('lanegate-live', 'nginx'), TARGETS.liveCpuOverNginx)
  const floorOverNginx = ratio('undici-floor', 'nginx')
  if (floorOverNginx !== undefined) {
    checks.push({ scenario: 'live-proxy', what: 'the Node floor (node:http + undici, nothing else) ÷ nginx, CPU per request', goal: `≤ ${TARGETS.liveCpuOverNginx}× (reported)`, measured: spreadText(floorOverNginx, '×'), met: floorOverNginx.median <= TARGETS.liveCpuOverNginx, reportOnly: true })
  }
  add('live relay (full chain) ÷ the Node floor, CPU per request', ratio('lanegate-live', 'undici-floor'), TARGETS.liveCpuOverFloor)
  add('live relay (full chain) ÷ the Node floor, heap bytes allocated per request', ratio('lanegate-live', 'undici-floor', heapPerRequest), TARGETS.liveHeapOverFloor)
  add('live relay (full chain) ÷ the raw-net floor (no HTTP library), CPU per request', ratio('lanegate-live', 'net-floor'), undefined)
  add('the Node floor ÷ the raw-net floor (what node:http and undici cost), CPU per request', ratio('undici-floor', 'net-floor'), undefined)
}

/** Heap bytes the server allocated per request of one measurement (NaN without the heap preload: nginx). */
function heapPerRequest (result: LoadResult): number {
  return result.serverHeapBytes === undefined || result.requests === 0 ? Number.NaN : result.serverHeapBytes / result.requests
}

/**
 * The token goal, round by round: the token endpoint's CPU per request less one signature's (`token-sign-only`,
 * the gateway's key signing a token's own header and payload in a loop) ÷ bare fastify's CPU per POST of the same form.
 */
function tokenLessSignatureCheck (scenarios: readonly ScenarioResult[], checks: TargetCheck[]): void {
  const parts: { token: number[], signature: number[], post: number[] } = { token: [], signature: [], post: [] }
  const judged = perRoundOf(scenarios, 'token', ['lanegate-token', 'token-sign-only', 'fastify-hello-post'], ([token, signature, post]) => {
    parts.token.push(cpuPerRequest(token))
    parts.signature.push(cpuPerRequest(signature))
    parts.post.push(cpuPerRequest(post))
    return (cpuPerRequest(token) - cpuPerRequest(signature)) / cpuPerRequest(post)
  })
  if (judged === undefined) return
  const us = (values: number[]): string => `${round3(spread(values).median)} µs`
  checks.push({
    scenario: 'token',
    what: 'token endpoint CPU per request less one signature\'s ÷ bare fastify POST\'s, same rounds',
    goal: `≤ ${TARGETS.tokenLessSignatureOverPost}×`,
    measured: `${spreadText(judged, '×')}; medians: token ${us(parts.token)}, signature ${us(parts.signature)}, bare POST ${us(parts.post)}`,
    met: judged.median <= TARGETS.tokenLessSignatureOverPost,
  })
}

/**
 * The Node peers issue 24's c=1 goal is held against: the gateways (nginx, in C, has its own line; `undici-floor` is
 * not a gateway but lanegate's own engine with nothing on it, the floor rather than a peer).
 */
export const NODE_PEERS = ['fast-gateway', 'http-proxy-3'] as const

/**
 * latency-c1, round by round: the live proxy's added latency (`pick` of its run minus the lane direct's), the best
 * (lowest) added latency among the Node peers that ran in that round, and the first minus the second; each spread
 * over the rounds that had the lane, the live proxy and at least one Node peer. Undefined when none had.
 */
export function againstBestNodePeer (scenarios: readonly ScenarioResult[], pick: (r: LoadResult) => number):
  { difference: Spread & { rounds: number }, ours: Spread, best: Spread, bestBy: Record<string, number> } | undefined {
  const runs = scenarios.find((s) => s.id === 'latency-c1')?.runs ?? []
  const ours: number[] = []
  const best: number[] = []
  const bestBy: Record<string, number> = {}
  for (const round of new Set(runs.map((r) => r.round))) {
    const of = (variant: string): LoadResult | undefined => runs.find((r) => r.round === round && r.variant === variant)?.result
    const lane = of('lane-direct')
    const gateway = of('lanegate-live')
    const peers = NODE_PEERS.map((name) => ({ name, result: of(name) })).filter((p): p is { name: typeof NODE_PEERS[number], result: LoadResult } => p.result !== undefined)
    if (lane === undefined || gateway === undefined || peers.length === 0) continue
    const added = peers.map((p) => ({ name: p.name, ms: pick(p.result) - pick(lane) })).sort((a, b) => a.ms - b.ms)
    const winner = added[0] as { name: string, ms: number }
    ours.push(pick(gateway) - pick(lane))
    best.push(winner.ms)
    bestBy[winner.name] = (bestBy[winner.name] ?? 0) + 1
  }
  if (ours.length === 0) return undefined
  return { difference: { ...spread(ours.map((v, i) => v - (best[i] as number))), rounds: ours.length }, ours: spread(ours), best: spread(best), bestBy }
}

/** A spread as the Targets table shows it: `median<unit> (min–max)`, to three decimals. */
function spreadText (s: Spread, unit: '×' | ' ms'): string {
  return `${round3(s.median)}${unit} (${round3(s.min)}–${round3(s.max)})`
}

function round3 (value: number): number {
  return Math.round(value * 1000) / 1000
}
