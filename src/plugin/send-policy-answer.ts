import type { FastifyReply } from 'fastify'
import type { PolicyAnswer } from './gateway-error.js'

/**
 * Sends a policy's own answer (`context.answer`: a cache hit, a CORS preflight) as the route's reply: its status,
 * its headers over those the chain set, its body; the route's onSend hooks (the response phase) run over it as over
 * any answer. The chain sends a returned answer this way (plugin/run-steps.ts), not through fastify's error path,
 * which ran the error hooks and deleted header entries on every cache hit; the error handler sends a thrown one.
 */
export function sendPolicyAnswer (reply: FastifyReply, answer: PolicyAnswer): void {
  reply.code(answer.status)
  const headers = answer.headers
  for (const name in headers) reply.header(name, headers[name] as string)
  reply.send(answer.body)
}
