import { Agent, createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { createProxyServer } from 'http-proxy-3'

/**
 * Peer: raw http-proxy-3 on node:http with a keep-alive agent, no policies: the floor a Node proxy starts from.
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } })
const proxy = createProxyServer({ target: values.target, agent: new Agent({ keepAlive: true, maxSockets: 128 }) })
proxy.on('error', function onProxyError (_error, _request, response) {
  if ('writeHead' in response && !response.headersSent) response.writeHead(502)
  response.end()
})
const server = createServer(function forward (request, response) {
  proxy.web(request, response)
})
server.listen(Number(values.port), '127.0.0.1')
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); process.exit(0) })
