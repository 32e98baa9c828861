import { createServer, type ServerResponse } from 'node:http'
import { parseArgs } from 'node:util'
import { WebSocketServer } from 'ws'

/**
 * The benchmark's lane: a raw node:http server with a fixed small JSON reply. The same process is hit directly
 * (the baseline) and through each proxy, so the ratio measures only what the proxy adds. `GET /__bench/counts`
 * (not counted) tells how many requests it served, how many of them through the proxy service, and how many were a
 * proxy service's mirror copies. `--delay-ms N`: every answer waits N ms (the proxy-mirror scenario's slow mirror).
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, 'delay-ms': { type: 'string', default: '0' } } })
const DELAY_MS = Number(values['delay-ms'])
const BODY = Buffer.from(JSON.stringify({ lane: 'bench', status: 'ok', items: [{ sku: '000123', qty: 1 }] }))
/** The answer to a SOAP call (the transform scenario's: a POST with a SOAPAction header). */
const SOAP_BODY = Buffer.from('<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
  '<m:GetItemResponse xmlns:m="urn:lanegate:bench"><sku>000123</sku><qty>1</qty><status>ok</status></m:GetItemResponse></soap:Body></soap:Envelope>')
let connections = 0
let requests = 0
/** Requests that came through the `proxy` service (its demo routes are under /prices/): the split check reads it. */
let proxied = 0
/** Copies a proxy service's mirror sent here (they carry X-Lanegate-Mirror): the mirror check reads it. */
let mirrored = 0
const server = createServer(function answer (request, response) {
  if (request.url === '/__bench/counts') {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ requests, proxied, mirrored }))
    return
  }
  requests++
  if (request.url?.startsWith('/prices/') === true) proxied++
  if (request.headers['x-lanegate-mirror'] !== undefined) mirrored++
  const soap = request.headers.soapaction !== undefined
  request.resume()
  // Without --delay-ms the lane answers as soon as the request has ended, as every other scenario's lane does.
  request.on('end', DELAY_MS > 0 ? () => { setTimeout(replyTo, DELAY_MS, response, soap) } : () => { replyTo(response, soap) })
})

function replyTo (response: ServerResponse, soap: boolean): void {
  response.writeHead(200, { 'content-type': soap ? 'text/xml; charset=utf-8' : 'application/json', 'content-length': soap ? SOAP_BODY.length : BODY.length })
  response.end(soap ? SOAP_BODY : BODY)
}
server.on('connection', () => { connections++ })
// The websocket scenario: every upgrade is an echo of each message as it came (text or binary).
const echo = new WebSocketServer({ server, perMessageDeflate: false, clientTracking: false })
echo.on('connection', (ws) => { ws.on('message', (data, isBinary) => { ws.send(data, { binary: isBinary }) }) })
server.keepAliveTimeout = 60_000
server.listen(Number(values.port), '127.0.0.1')
process.on('SIGTERM', function stop () {
  // How many connections the lane saw tells whether a proxy reuses its upstream sockets (see lane.log).
  process.stdout.write(`${JSON.stringify({ lane: 'stopped', connections, requests })}\n`, () => process.exit(0))
  server.close()
  server.closeAllConnections()
})
