import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { renderError } from '../../src/errors/envelopes.js'
import { relayedResponseHeaders, type UpstreamTrace } from '../../src/upstream/headers.js'
import { startRelay as startUpstreamRelay } from '../../src/upstream/relay.js'
import { SINGLE_TARGET_DEFAULTS, type UpstreamSettings } from '../../src/upstream/settings.js'
import { Upstream } from '../../src/upstream/upstream.js'

interface Teardown {
  teardown (fn: () => unknown): void
}

/** A backend on port 0 that counts requests; `handler` answers (default: 200 with its name). */
export interface Backend {
  name: string
  url: string
  port: number
  /** Requests it received, in order. */
  seen: Array<{ method: string, url: string, headers: IncomingMessage['headers'], body: string }>
  /** Replaces how it answers. */
  handle: (handler: BackendHandler) => void
  /** Connections open right now (a client's keep-alive sockets included): 0 once every client closed its own. */
  openConnections: () => number
  /** The server itself (e.g. to raise `keepAliveTimeout`, so only the client can close an idle socket). */
  server: Server
  close: () => Promise<void>
}

/**
 * Answers one request, called once its whole body was read (it is `body`): `req` has ended by then, so its
 * 'data' and 'end' events never fire again — a handler waiting for them never answers.
 */
export type BackendHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void

export async function startBackend (t: Teardown, name: string, port = 0): Promise<Backend> {
  let handler: BackendHandler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end(name)
  }
  const seen: Backend['seen'] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      handler(req, res, body)
    })
  })
  const open = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  await listen(server, port)
  const actual = (server.address() as AddressInfo).port
  const close = async (): Promise<void> => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(() => server.listening ? close() : undefined)
  return { name, url: `http://127.0.0.1:${actual}`, port: actual, seen, handle: (h) => { handler = h }, openConnections: () => open.size, server, close }
}

/** A port nothing listens on (it was free a moment ago): connections are refused. */
export async function deadPort (): Promise<number> {
  const server = createServer()
  await listen(server, 0)
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

function listen (server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
}

/** Upstream settings for tests: round robin, no retry, no health checks, short timeouts, unless overridden. */
export function testSettings (urls: Array<string | { url: string, weight: number }>, overrides: Partial<UpstreamSettings> = {}): UpstreamSettings {
  return {
    targets: urls.map((u) => typeof u === 'string' ? { url: u, weight: 1 } : u),
    ...SINGLE_TARGET_DEFAULTS,
    max_sockets: 8,
    timeouts: { connect_ms: 1000, response_ms: 2000, body_idle_ms: 2000 },
    label: 'The upstream service',
    ...overrides,
  }
}

/** An Upstream closed at teardown. */
export function testUpstream (t: Teardown, settings: UpstreamSettings): Upstream {
  const upstream = new Upstream(settings)
  t.teardown(() => upstream.close())
  return upstream
}

/**
 * A front server relaying every request to `upstream` the way the gateway's routes do, rendering failures in the
 * exchange envelope. Returns its base URL.
 */
export async function startRelay (t: Teardown, upstream: Upstream, options: { maxBodyBytes?: number, maxErrorBodyBytes?: number, trace?: UpstreamTrace } = {}): Promise<string> {
  const server = createServer((req, res) => {
    startUpstreamRelay(upstream, {
      req,
      res,
      path: req.url ?? '/',
      clientIp: '127.0.0.1',
      requestId: 'req-1',
      trace: options.trace,
      maxBodyBytes: options.maxBodyBytes ?? 1048576,
      maxErrorBodyBytes: options.maxErrorBodyBytes ?? 64,
      takeOver: (headers) => relayedResponseHeaders(headers),
      settled (error) {
        if (error === undefined || res.headersSent || res.destroyed) return
        // The request body may still be arriving (a refused write): read it so the answer is not a reset.
        req.resume()
        res.writeHead(error.status, { ...error.headers, 'content-type': 'application/json' })
        res.end(JSON.stringify(renderError(error, 'exchange')))
      },
    })
  })
  await listen(server, 0)
  t.teardown(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
