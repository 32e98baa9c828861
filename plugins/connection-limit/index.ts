import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientIpKey, definePolicy, type StepOutcome } from '../../src/plugin.js'
import { connectionLimitSchema } from './schema.js'

/**
 * Open connections by `service/route` and key. Module-level, not per `create`: a reload builds the chain again,
 * and connections opened under the old snapshot still count (and are released) under the new one.
 */
const open = new Map<string, number>()

/**
 * `connection-limit`: bounds how many connections one client (or IP) has open on a route at once — WebSockets for
 * their whole life, and any other request (an event stream, a long download) until its response ends. The one
 * over `max` gets 429 `too_many_requests` before anything is upgraded or relayed. The count is held by this
 * process (per worker with `server.workers` > 1; docs/websocket.md).
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
    return function connectionLimitStep (request: FastifyRequest, reply: FastifyReply): StepOutcome {
      const key = `${route}\u0000${keyOf(request)}`
      const count = open.get(key) ?? 0
      if (count >= options.max) {
        return context.refuse('too_many_requests', { fields: { max_connections: options.max } })
      }
      open.set(key, count + 1)
      let released = false
      const release = (): void => {
        if (released) return
        released = true
        const left = (open.get(key) ?? 1) - 1
        if (left <= 0) open.delete(key)
        else open.set(key, left)
      }
      // An upgrade lives as long as its socket; an ordinary request until its response is done (or cut).
      if (request.headers.upgrade !== undefined) request.raw.socket.once('close', release)
      else reply.raw.once('close', release)
      return undefined
    }
  },
})

export default connectionLimit
