// sleep: only for the case's duration (load running for a while is what a fault case measures); conditions
// are waited for (until).
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { createServer as createHttpServer } from 'node:http'
import { rawHttpTarget, type RawHttpTarget } from '../helpers/raw-http-target.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { until } from '../helpers/wait-for.js'
import { steadyLoad, totalByStatus } from './load.js'
import type { FaultRow } from './report.js'

export type BrokenMode = 'stall' | 'reset' | 'trickle' | 'malformed'

/** The failure each mode must be answered with (docs/errors.md). */
const EXPECTED: Record<BrokenMode, string> = { stall: 'timeout', reset: 'reset', trickle: 'timeout', malformed: 'protocol' }

/**
 * A raw TCP target for the `pricing` proxy service (/health answers 200): /prices/<mode> misbehaves: `stall`
 * accepts and never answers, `reset` sends a head and part of a body then resets, `trickle` sends its head one
 * byte every 300 ms, `malformed` answers something that is not HTTP. Counts its open sockets.
 */
function brokenTarget (): Promise<RawHttpTarget> {
  return rawHttpTarget((path, socket) => {
    if (path.endsWith('/stall')) return
    if (path.endsWith('/reset')) {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\npartial')
      setTimeout(() => socket.resetAndDestroy(), 20)
      return
    }
    if (path.endsWith('/trickle')) {
      const text = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'
      let i = 0
      const timer = setInterval(() => {
        if (socket.destroyed || i >= text.length) return clearInterval(timer)
        socket.write(text[i++] as string)
      }, 300)
      return
    }
    socket.write('NOT HTTP AT ALL\r\n\r\n')
  })
}

export interface BrokenTargetOptions {
  durationMs: number
  concurrency: number
}

/**
 * Mixed load: half the loops call the broken `pricing` target (each mode in turn), half a healthy lane through
 * the live proxy. The broken calls must be 502 upstream_error with the mode's upstream_failure within the
 * configured timeouts (1 s here); the healthy calls 200; afterwards the broken target's open sockets back to at
 * most the pool's keep-alive size (no leak).
 */
export async function brokenTargets (options: BrokenTargetOptions): Promise<FaultRow> {
  const failures: string[] = []
  const target = await brokenTarget()
  const laneServer = createHttpServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}') })
  await new Promise<void>((resolve) => laneServer.listen(0, '127.0.0.1', resolve))
  const lane = {
    url: `http://127.0.0.1:${(laneServer.address() as { port: number }).port}`,
    close: async () => { laneServer.closeAllConnections(); await new Promise((resolve) => laneServer.close(resolve)) },
  }
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('services.pricing.upstream.targets', [`http://127.0.0.1:${target.port}`])
    .set('services.pricing.upstream.timeouts', { connect_ms: 1000, response_ms: 1000, body_idle_ms: 1000 })
    .set('services.pricing.upstream.retry.attempts', 1)
    .set('services.pricing.upstream.health.passive.failures', 1000)
    .set('rate_limits.exchange-per-client.points', 10000000)
    .write()
  const gw = await spawnGateway({ config: cfg.file, env: { LANE_001_URL: lane.url } }).catch(async (error: unknown) => {
    await Promise.all([cfg.remove(), lane.close(), target.close()])
    throw error
  })
  try {
    const pricing = await fetchGatewayToken(gw.base, 'demo-pricing')
    const exchange = await fetchGatewayToken(gw.base, 'demo-exchange')
    const socketsBefore = target.open()
    const modes: BrokenMode[] = ['stall', 'reset', 'trickle', 'malformed']
    let turn = 0
    const half = Math.max(1, Math.floor(options.concurrency / 2))
    const load = steadyLoad(options.concurrency, (loop) => {
      if (loop < half) {
        const mode = modes[turn++ % modes.length] as BrokenMode
        return { kind: mode, method: 'GET', url: `${gw.base}/legacy/pricing/prices/${mode}`, headers: { authorization: `Bearer ${pricing}` } }
      }
      return { kind: 'healthy', method: 'GET', url: `${gw.base}/v1/stores/org_store_001/live/status`, headers: { authorization: `Bearer ${exchange}` } }
    }, (answer) => {
      if (answer.kind === 'healthy') {
        if (answer.status !== 200) failures.push(`healthy lane answered ${answer.status}`)
        return
      }
      // A reset after the head and first bytes were relayed aborts the caller's connection (RELIABILITY F7): no
      // answer that looks complete. Before that, it is 502 `reset`.
      if (answer.kind === 'reset' && answer.status === -1) return
      let failure: string | undefined
      try {
        failure = (JSON.parse(answer.body) as { upstream_failure?: string }).upstream_failure
      } catch {}
      if (answer.status !== 502 || failure !== EXPECTED[answer.kind as BrokenMode]) failures.push(`${answer.kind}: ${answer.status} ${answer.body.slice(0, 100)}`)
      // 10 × (connect 1 s + response 1 s), for a loaded machine: a broken target's answer that hung instead runs
      // to the server's 30 s request timeout.
      if (answer.ms > 20_000) failures.push(`${answer.kind}: answered after ${answer.ms} ms`)
    })
    // The load running for its duration is the case itself.
    await sleep(options.durationMs)
    const result = await load.stop()
    // The pool keeps idle keep-alive sockets; broken ones must be gone.
    await until(() => target.open() <= 32, 10_000)
    const socketsAfter = target.open()
    if (socketsAfter > 32) failures.push(`${socketsAfter} sockets still open to the broken target (pool max 32)`)
    if (gw.child.exitCode !== null) failures.push('the gateway exited')
    return {
      case: 'Proxy target that never answers, resets mid-body, trickles, answers malformed HTTP',
      load: `${half} loops on the broken target, ${options.concurrency - half} on a healthy lane`,
      sent: result.sent,
      byStatus: totalByStatus(result.counts),
      lost: 0,
      duplicated: 0,
      recoveryMs: undefined,
      failures: [...new Set(failures)].slice(0, 5),
      notes: `sockets to the broken target: ${socketsBefore} before, ${socketsAfter} after; slowest answer ${result.maxMs} ms`,
    }
  } finally {
    gw.child.kill('SIGKILL')
    await gw.exited
    await cfg.remove()
    await lane.close()
    await target.close()
  }
}
