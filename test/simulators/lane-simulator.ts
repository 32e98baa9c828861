import http from 'node:http'
import type { Socket } from 'node:net'
import { acceptEventSockets, serveEventStream } from './lane-events.js'

/** One request as the lane received it. `body` is filled once the request ended (empty while streaming). */
export interface RecordedRequest {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  /** Header names exactly as sent (casing and order), for hop-by-hop checks. */
  rawHeaderNames: string[]
  body: string
  /** The sender went away before the body ended. */
  aborted: boolean
  /** The connection this request came on has closed. */
  connectionClosed: boolean
}

/**
 * How the lane answers requests that do not pick a behaviour by path:
 * - `ok`: echo (fan-out endpoints answer normally);
 * - `{kind:'fail', status, html?}`: that status with a JSON (or HTML) body;
 * - `stall`: never answer; `{kind:'slow', ms}`: answer normally after `ms`;
 * - `reset`: destroy the socket before any header; `reset-mid-body`: headers and part of a body, then destroy;
 * - `redirect`: 302 to an internal-looking Location.
 */
export type LaneMode =
  | 'ok' | 'stall' | 'reset' | 'reset-mid-body' | 'redirect'
  | { kind: 'fail', status: number, html?: boolean }
  | { kind: 'slow', ms: number }

export interface AppliedOperation {
  key: string
  operation: string
  store_org_id: string
  payload: unknown
}

export interface LaneSimulator {
  url: string
  port: number
  name: string
  requests: RecordedRequest[]
  setMode (mode: LaneMode): void
  /** Fan-out applies actually performed (a replayed Idempotency-Key does not add one). */
  applied: AppliedOperation[]
  /** How many times `key` (or any key) was applied; a replayed key counts once. */
  appliedCount (key?: string): number
  /** Open sockets right now (for checks that aborted requests do not leak connections). */
  openSockets (): number
  close (): Promise<void>
}

export interface LaneSimulatorOptions {
  port?: number
  host?: string
  name: string
}

/** A header the lane sets on answers, so tests can see it dropped or relayed. */
const INTERNAL_LOCATION = 'http://lane-internal.invalid:8443/secret/next'

/**
 * A small lane-software stand-in on a real socket. Paths pick behaviours (the mode applies otherwise):
 * `/__sim/status/<code>[?html=1]`, `/__sim/stall`, `/__sim/slow?ms=N`, `/__sim/reset`, `/__sim/reset-mid-body`,
 * `/__sim/redirect`, `/__sim/big-error?bytes=N`, `/__sim/hop-headers`, `/__sim/gzip-error`,
 * `/stream?chunks=N&interval=MS` (chunked body), `…/events?interval=MS&count=N` (price events as SSE, or pushed
 * over a WebSocket when upgraded: lane-events.ts), the fan-out protocol (`POST /fanout/:operation/preview` and
 * `/apply` with Idempotency-Key), and an echo of everything else (`{lane, method, url, headers, body}`).
 */
export async function startLaneSimulator (options: LaneSimulatorOptions): Promise<LaneSimulator> {
  const requests: RecordedRequest[] = []
  const applied: AppliedOperation[] = []
  const replies = new Map<string, unknown>()
  const sockets = new Set<Socket>()
  let mode: LaneMode = 'ok'

  const server = http.createServer((req, res) => {
    const record: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaderNames: req.rawHeaders.filter((_, i) => i % 2 === 0),
      body: '',
      aborted: false,
      connectionClosed: false,
    }
    requests.push(record)
    req.socket.once('close', () => { record.connectionClosed = true })
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('aborted', () => { record.aborted = true })
    req.on('error', () => { record.aborted = true })
    req.on('end', () => {
      record.body = Buffer.concat(chunks).toString('utf8')
      const delay = typeof mode === 'object' && mode.kind === 'slow' ? mode.ms : 0
      if (delay > 0) setTimeout(() => answer(req, res, record), delay)
      else answer(req, res, record)
    })
  })

  function answer (req: http.IncomingMessage, res: http.ServerResponse, record: RecordedRequest): void {
    const url = new URL(req.url ?? '/', 'http://lane')
    const sim = url.pathname.indexOf('/__sim/')
    if (sim !== -1) {
      simBehaviour(url.pathname.slice(sim + '/__sim/'.length), url, res)
      return
    }
    const fanout = /\/fanout\/([^/]+)\/(preview|apply)$/.exec(url.pathname)
    if (fanout !== null && req.method === 'POST') {
      if (!applyMode(res)) return
      fanoutBehaviour(fanout[1] as string, fanout[2] as 'preview' | 'apply', req, res, record)
      return
    }
    if (url.pathname.endsWith('/bulk')) {
      if (!applyMode(res)) return
      bulkBody(res, Number(url.searchParams.get('bytes') ?? 1024))
      return
    }
    if (url.pathname.endsWith('/events') && record.method === 'GET') {
      serveEventStream(options.name, url, res)
      return
    }
    if (url.pathname.endsWith('/stream')) {
      if (!applyMode(res)) return
      streamChunks(res, Number(url.searchParams.get('chunks') ?? 3), Number(url.searchParams.get('interval') ?? 5))
      return
    }
    if (!applyMode(res)) return
    json(res, 200, { lane: options.name, method: record.method, url: record.url, headers: record.headers, body: record.body })
  }

  /** Applies the current mode; returns true when the request should be answered normally. */
  function applyMode (res: http.ServerResponse): boolean {
    if (mode === 'ok' || (typeof mode === 'object' && mode.kind === 'slow')) return true
    behave(mode, res)
    return false
  }

  function behave (chosen: Exclude<LaneMode, 'ok' | { kind: 'slow' }>, res: http.ServerResponse): void {
    if (chosen === 'stall') return
    if (chosen === 'reset') { res.socket?.destroy(); return }
    if (chosen === 'reset-mid-body') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' })
      res.write('partial body, ')
      setTimeout(() => res.socket?.destroy(), 20)
      return
    }
    if (chosen === 'redirect') {
      res.writeHead(302, { location: INTERNAL_LOCATION, 'content-type': 'text/plain' })
      res.end('moved')
      return
    }
    if (typeof chosen === 'object' && chosen.kind === 'fail') fail(res, chosen.status, chosen.html === true)
  }

  function fail (res: http.ServerResponse, status: number, html: boolean): void {
    if (html) {
      res.writeHead(status, { 'content-type': 'text/html' })
      res.end(`<html><body><h1>Error ${status}</h1><script>alert("x")</script></body></html>`)
      return
    }
    json(res, status, { lane_error: `failed with ${status}`, lane: options.name })
  }

  function simBehaviour (rest: string, url: URL, res: http.ServerResponse): void {
    const [what, arg] = rest.split('/')
    switch (what) {
      case 'status': {
        const status = Number(arg)
        if (status >= 300 && status < 400) {
          res.writeHead(status, { location: INTERNAL_LOCATION, 'content-type': 'text/plain' })
          res.end('redirecting')
        } else if (status < 400) {
          json(res, status, { status })
        } else {
          fail(res, status, url.searchParams.get('html') === '1')
        }
        return
      }
      case 'stall': return
      case 'slow': {
        setTimeout(() => json(res, 200, { slow: true }), Number(url.searchParams.get('ms') ?? 100))
        return
      }
      case 'reset': behave('reset', res); return
      case 'reset-mid-body': behave('reset-mid-body', res); return
      case 'redirect': behave('redirect', res); return
      case 'big-error': {
        const bytes = Number(url.searchParams.get('bytes') ?? 100000)
        res.writeHead(500, { 'content-type': 'text/plain' })
        res.end('x'.repeat(bytes))
        return
      }
      case 'gzip-error': {
        import('node:zlib').then(({ gzipSync }) => {
          res.writeHead(503, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
          res.end(gzipSync(JSON.stringify({ lane_error: 'compressed' })))
        }, () => res.destroy())
        return
      }
      case 'hop-headers': {
        res.setHeader('connection', 'keep-alive, x-lane-secret')
        res.setHeader('x-lane-secret', 'lane-only')
        res.setHeader('keep-alive', 'timeout=5')
        res.setHeader('trailer', 'x-checksum')
        res.setHeader('upgrade', 'h2c')
        res.setHeader('proxy-authenticate', 'Basic realm="lane"')
        res.setHeader('set-cookie', ['lane_session=abc; HttpOnly'])
        res.setHeader('www-authenticate', 'Basic realm="lane"')
        res.setHeader('server', 'lane-os/1.2')
        res.setHeader('x-powered-by', 'LaneWare')
        res.setHeader('x-lane-visible', 'yes')
        res.setHeader('content-type', 'application/json')
        // Chunked (no Content-Length): a Trailer header is only valid with chunked encoding.
        res.writeHead(200)
        res.end(JSON.stringify({ headers: 'sent' }))
        return
      }
      default:
        json(res, 404, { lane_error: 'unknown simulator path' })
    }
  }

  function fanoutBehaviour (operation: string, step: 'preview' | 'apply', req: http.IncomingMessage,
    res: http.ServerResponse, record: RecordedRequest): void {
    let body: { dispatch_id?: unknown, store_org_id?: unknown, payload?: unknown }
    try {
      body = JSON.parse(record.body) as typeof body
    } catch {
      json(res, 400, { lane_error: 'body is not JSON' })
      return
    }
    const storeId = String(body.store_org_id ?? '')
    if (step === 'preview') {
      json(res, 200, { ok: true, store_org_id: storeId, summary: { operation, dispatch_id: body.dispatch_id ?? null, would_apply: true } })
      return
    }
    const key = req.headers['idempotency-key']
    if (typeof key !== 'string' || key === '') {
      json(res, 400, { lane_error: 'Idempotency-Key required' })
      return
    }
    if (!replies.has(key)) {
      applied.push({ key, operation, store_org_id: storeId, payload: body.payload })
      replies.set(key, { applied: true, store_org_id: storeId })
    }
    json(res, 200, replies.get(key))
  }

  acceptEventSockets(options.name, server)
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    name: options.name,
    requests,
    applied,
    setMode (next) { mode = next },
    appliedCount (key) { return key === undefined ? applied.length : applied.filter((a) => a.key === key).length },
    openSockets () { return sockets.size },
    close () {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function json (res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** The bytes of `/bulk?bytes=N`: a repeating pattern, so a test can check every byte arrived in order. */
export function bulkPattern (bytes: number): Buffer {
  const out = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i++) out[i] = 97 + (i % 26)
  return out
}

/** A large body written as fast as the socket takes it, honouring backpressure. */
function bulkBody (res: http.ServerResponse, bytes: number): void {
  const body = bulkPattern(bytes)
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes) })
  let offset = 0
  const pump = (): void => {
    while (offset < body.length) {
      const chunk = body.subarray(offset, offset + 65536)
      offset += chunk.length
      if (!res.write(chunk)) {
        res.once('drain', pump)
        return
      }
    }
    res.end()
  }
  pump()
}

function streamChunks (res: http.ServerResponse, chunks: number, interval: number): void {
  res.writeHead(200, { 'content-type': 'text/plain' })
  let sent = 0
  const next = (): void => {
    if (res.destroyed) return
    sent += 1
    res.write(`chunk ${sent}\n`)
    if (sent >= chunks) res.end()
    else setTimeout(next, interval).unref()
  }
  next()
}
