import { parseArgs } from 'node:util'
import { requirePeer } from '../peers.js'

/**
 * Peer: fast-gateway (installed by `npm run bench:peers`) with one route and no middlewares: requests under
 * /v1/ go to the bench lane (the prefix is stripped, as the lane ignores paths anyway).
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } })
const gateway = requirePeer('fast-gateway') as (options: unknown) => { start (port: number, host?: string): Promise<unknown> }
const server = gateway({ routes: [{ prefix: '/v1', target: values.target }] })
await server.start(Number(values.port), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
