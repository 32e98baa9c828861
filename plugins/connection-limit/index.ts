import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientIpKey, definePolicy, type StepOutcome } from '../../src/plugin/index.js'
import { connectionLimitSchema } from './schema.js'

/**
 * `connection-limit`: bounds how many connections one client (or IP) has open on a route at once — WebSockets for
 * their whole life, and any other request (an event stream, a long download) until its response ends. The one
 * over `max` gets 429 `too_many_requests` before anything is upgraded or relayed. The count is held by this
 * host: under `server.workers` > 1 the primary holds the counts for every worker (docs/websocket.md).
 */
const connectionLimit = definePolicy({
  name: 'connection-limit',
  description: 'Bounds the open connections (WebSockets, in-flight responses) per client or IP on the route.',
  schema: connectionLimitSchema,
  requires: (options) => options.key === 'client' ? ['auth'] : [],
  summarize: (options) => `at most ${options.max} open connections per ${options.key}`,
  refusals: () => ['too_many_requests'],
  explain: (options) => ({ outcome: 'depends', status: 429, code: 'too_many_requests', note: `at most ${options.max} open connections per ${options.key}` }),
  create (options, context) {
    const route = `${context.service}/${context.routeId}`
    const keyOf = options.key === 'ip'
      ? clientIpKey
      : (request: FastifyRequest) => context.principal(request)?.clientId ?? '(unknown)'
    const slots = context.connectionSlots
    const refusal = (): StepOutcome => context.refuse('too_many_requests', { fields: { max_connections: options.max } })
    /** Gives the place back when the connection ends: an upgrade with its socket, any other request with its response. */
    const holdUntilEnd = (request: FastifyRequest, reply: FastifyReply, key: string): void => {
      let released = false
      const release = (): void => {
        if (released) return
        released = true
        slots.release(key)
      }
      if (request.headers.upgrade !== undefined) request.raw.socket.once('close', release)
      else reply.raw.once('close', release)
    }
    return function connectionLimitStep (request: FastifyRequest, reply: FastifyReply): StepOutcome | Promise<StepOutcome> {
      // Module-level counts (connectionSlots), keyed by route: a reload builds the chain again, and connections
      // opened under the old snapshot still count and are released under the new one.
      const key = `${route}\u0000${keyOf(request)}`
      const allowed = slots.acquire(key, options.max)
      if (allowed === true) {
        holdUntilEnd(request, reply, key)
        return undefined
      }
      if (allowed === false) return refusal()
      return allowed.then((granted) => {
        if (!granted) return refusal()
        // The caller may have left while the primary answered: its place is given back at once.
        if (request.raw.socket.destroyed) slots.release(key)
        else holdUntilEnd(request, reply, key)
        return undefined
      })
    }
  },
})

export default connectionLimit
