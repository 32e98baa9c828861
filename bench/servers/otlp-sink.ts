import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { countOtlpSpans } from '../otlp-span-count.js'
import { SINK_GATEWAY_HEADER, type SinkCounts } from '../otlp-sink-counts.js'

/**
 * The `--telemetry` variants' OTLP/HTTP collector: takes POSTs to /v1/traces and answers 200 at once, as a
 * collector that keeps up does. It decodes nothing; it counts, by the gateway each export names in
 * SINK_GATEWAY_HEADER, the export requests, their bytes and the spans in them (read off the wire format, which costs
 * this process, not the gateway measured). `GET /__bench/counts` answers the counts (SinkCounts).
 */
const { values } = parseArgs({ options: { port: { type: 'string' } } })
const counts: SinkCounts = {}
const server = createServer(function receive (request, response) {
  if (request.method === 'GET' && request.url === '/__bench/counts') {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(counts))
    return
  }
  if (request.method !== 'POST' || request.url !== '/v1/traces') {
    request.resume()
    response.writeHead(404).end()
    return
  }
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 })
    response.end()
    const body = Buffer.concat(chunks)
    const gateway = String(request.headers[SINK_GATEWAY_HEADER] ?? 'unnamed')
    const seen = counts[gateway] ??= { exports: 0, bytes: 0, spans: 0, unreadable: 0 }
    seen.exports++
    seen.bytes += body.length
    try {
      seen.spans += countOtlpSpans(body)
    } catch {
      seen.unreadable++
    }
  })
})
server.keepAliveTimeout = 60_000
server.listen(Number(values.port), '127.0.0.1')
process.on('SIGTERM', function stop () {
  process.stdout.write(`${JSON.stringify({ sink: 'stopped', counts })}\n`, () => process.exit(0))
  server.close()
  server.closeAllConnections()
})
