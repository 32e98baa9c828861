import { execFileSync } from 'node:child_process'
import WebSocket from 'ws'
import { peerWanted, type BenchOptions } from './options.js'
import { nginxBinary } from './peers.js'
import { memoryOf } from './proc-stat.js'
import type { RunLog } from './run-scenario.js'
import type { ScenarioResult, WebSocketMeasurement } from './result-types.js'
import type { ServerSet } from './servers.js'
import { SCENARIO_TITLES } from './scenarios.js'
import { spread } from './stats.js'
import { EXCHANGE_CLIENT, fetchToken } from './tokens.js'

/** The lane's echo path; through the gateway it is below the live proxy of store 001. */
const LANE_WS_PATH = '/ws/echo'
const GATEWAY_WS_PATH = `/v1/stores/org_store_001/live${LANE_WS_PATH}`
/** Messages in flight per connection: each connection sends its next message when the echo of the last came back. */
const MESSAGE = Buffer.alloc(64, 97)
/** Concurrent echoing connections of the throughput part. */
const ECHO_CONNECTIONS = 32

async function openMany (url: string, count: number, headers?: Record<string, string>): Promise<WebSocket[]> {
  const sockets: WebSocket[] = []
  // In batches: a burst of handshakes measures the listen backlog, not the relay.
  for (let opened = 0; opened < count; opened += 200) {
    const batch = Math.min(200, count - opened)
    sockets.push(...await Promise.all(Array.from({ length: batch }, () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false })
      ws.once('open', () => resolve(ws))
      ws.once('error', reject)
      ws.once('unexpected-response', (_req, res) => reject(new Error(`${url} answered ${res.statusCode ?? 0}`)))
    }))))
  }
  return sockets
}

/** Echoed messages per second over `seconds` with ECHO_CONNECTIONS connections ping-ponging 64-byte messages. */
async function echoRate (url: string, seconds: number, headers?: Record<string, string>): Promise<number> {
  const sockets = await openMany(url, ECHO_CONNECTIONS, headers)
  let echoed = 0
  let running = true
  for (const ws of sockets) {
    ws.on('message', () => {
      echoed++
      if (running) ws.send(MESSAGE)
    })
    ws.send(MESSAGE)
  }
  await new Promise((resolve) => setTimeout(resolve, 300))
  const start = echoed
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const rate = (echoed - start) / ((performance.now() - started) / 1000)
  running = false
  await Promise.all(sockets.map((ws) => new Promise((resolve) => { ws.once('close', resolve); ws.close() })))
  return rate
}

/** How many idle connections fit: the gateway holds two sockets per relayed connection (caller and lane). */
function idleConnectionCount (wanted: number, log: RunLog): number {
  let limit = Number.POSITIVE_INFINITY
  try {
    limit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim())
  } catch {
    // No shell: assume the default is enough.
  }
  const fits = Number.isFinite(limit) ? Math.floor((limit - 1000) / 2) : wanted
  if (fits < wanted) log.warn(`websocket: open files limit ${limit} fits ${fits} relayed connections, not ${wanted}: measured with ${fits}`)
  return Math.min(wanted, fits)
}

/**
 * The `websocket` scenario: 64-byte messages echoed per second by the lane hit directly, through the gateway's
 * live proxy (full chain on the upgrade), and through nginx when installed, in the same rounds (rotating order);
 * then the gateway's RSS with 10,000 idle connections open (or as many as the open-files limit allows) against
 * its idle RSS.
 */
export async function runWebSocket (servers: ServerSet, options: BenchOptions, log: RunLog): Promise<ScenarioResult> {
  const lane = await servers.lane()
  const gateway = await servers.gateway('main')
  const token = await fetchToken(gateway.url, EXCHANGE_CLIENT)
  const auth = { authorization: `Bearer ${token}` }
  const variants: Array<{ name: string, url: string, headers?: Record<string, string> }> = [
    { name: 'lane-direct', url: `${lane.url.replace('http:', 'ws:')}${LANE_WS_PATH}` },
    { name: 'lanegate-live', url: `${gateway.url.replace('http:', 'ws:')}${GATEWAY_WS_PATH}`, headers: auth },
  ]
  const skipped: ScenarioResult['skipped'] = []
  if (peerWanted(options, 'nginx') && nginxBinary() !== undefined) {
    const nginx = await servers.nginx()
    variants.push({ name: 'nginx', url: `${nginx.url.replace('http:', 'ws:')}${LANE_WS_PATH}` })
  } else {
    skipped.push({ variant: 'nginx', reason: peerWanted(options, 'nginx') ? 'nginx is not installed (npm run bench:peers installs it as root)' : '--no-peers or --peers without nginx' })
  }
  for (const v of variants) await echoRate(v.url, options.warmupSeconds, v.headers)
  const rates = new Map<string, number[]>(variants.map((v) => [v.name, []]))
  const ratios = new Map<string, number[]>(variants.map((v) => [v.name, []]))
  for (let round = 0; round < options.rounds; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!)
    const measured = new Map<string, number>()
    for (const v of order) {
      const rate = await echoRate(v.url, options.durationSeconds, v.headers)
      measured.set(v.name, rate)
      rates.get(v.name)!.push(rate)
      log.progress(`websocket round ${round + 1}: ${v.name} ${Math.round(rate)} msg/s`)
    }
    const direct = measured.get('lane-direct') ?? Number.NaN
    for (const v of variants) ratios.get(v.name)!.push((measured.get(v.name) ?? 0) / direct)
  }

  const idleWanted = idleConnectionCount(options.quick ? 2_000 : 10_000, log)
  const rssIdle = memoryOf(gateway.pid).rss
  const idle = await openMany(`${gateway.url.replace('http:', 'ws:')}${GATEWAY_WS_PATH}`, idleWanted, auth)
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const rssOpen = memoryOf(gateway.pid).rss
  await Promise.all(idle.map((ws) => new Promise((resolve) => { ws.once('close', resolve); ws.close() })))

  const websocket: WebSocketMeasurement = {
    echoConnections: ECHO_CONNECTIONS,
    messageBytes: MESSAGE.length,
    variants: variants.map((v) => ({ name: v.name, messagesPerSecond: spread(rates.get(v.name)!), ratio: spread(ratios.get(v.name)!) })),
    idleConnections: idle.length,
    rssIdleGateway: rssIdle,
    rssWithIdleConnections: rssOpen,
  }
  return {
    id: 'websocket',
    title: SCENARIO_TITLES.websocket,
    kind: 'websocket',
    baseline: 'lane-direct',
    connections: ECHO_CONNECTIONS,
    variants: [],
    runs: [],
    skipped,
    websocket,
  }
}
