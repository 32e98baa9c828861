import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import { parseArgs } from 'node:util'
import { Pool, type Dispatcher } from 'undici'

/**
 * Peer: the floor of lanegate's own relay engine. node:http in front, one undici Pool (lanegate's settings:
 * 32 connections, no pipelining) behind, `dispatch` with a handler that streams the answer back, and nothing
 * else: no routing, no policies, no header filtering beyond `host`, no timers, no metrics. Whatever lanegate's
 * live relay costs above this is lanegate's; what this costs above nginx is Node's http, undici and V8.
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } })
const target = new URL(values.target ?? 'http://127.0.0.1:1')
const pool = new Pool(target.origin, { connections: 32, pipelining: 1 })

function upstreamHeaders (incoming: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const name in incoming) {
    const value = incoming[name]
    // The caller's token stays here, as lanegate drops it before its upstream.
    if (value !== undefined && name !== 'host' && name !== 'connection' && name !== 'authorization') out[name] = value
  }
  out.host = target.host
  return out
}

const server = createServer(function relay (request, response) {
  let status = 0
  let headers: OutgoingHttpHeaders = {}
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart () {},
    onResponseStart (_controller, statusCode, answerHeaders) {
      status = statusCode
      headers = answerHeaders as OutgoingHttpHeaders
      delete headers.connection
      delete headers['keep-alive']
      delete headers['transfer-encoding']
    },
    onResponseData (_controller, chunk) {
      if (!response.headersSent) response.writeHead(status, headers)
      response.write(chunk)
    },
    onResponseEnd () {
      if (!response.headersSent) response.writeHead(status, headers)
      response.end()
    },
    onResponseError () {
      if (!response.headersSent) response.writeHead(502)
      response.end()
    },
  }
  pool.dispatch({ path: request.url ?? '/', method: (request.method ?? 'GET') as Dispatcher.HttpMethod, headers: upstreamHeaders(request.headers) }, handler)
})
server.listen(Number(values.port), '127.0.0.1')
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); process.exit(0) })
