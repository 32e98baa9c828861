import { parseArgs } from 'node:util'
import { createNetRelay } from '../net-relay.js'

/**
 * Peer: the raw-`net` floor of the live proxy (bench/net-relay.ts): HTTP/1.1 parsed by hand on `net` sockets, a
 * keep-alive pool to the lane, no HTTP library. Beside the undici floor, it shows what node:http and undici cost.
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } })
const server = createNetRelay(new URL(values.target ?? 'http://127.0.0.1:1'))
server.listen(Number(values.port), '127.0.0.1')
process.on('SIGTERM', () => { server.close(); process.exit(0) })
