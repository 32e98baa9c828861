import Fastify from 'fastify'
import t from 'tap'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError, PolicyAnswer } from '../../src/plugin/gateway-error.js'
import { runSteps } from '../../src/plugin/run-steps.js'
import type { PolicyStep } from '../../src/plugin/index.js'

/**
 * A policy's own answer (`context.answer`: a cache hit, a CORS preflight) is the route's reply, not an error: it
 * used to go out through fastify's error path, which ran every onError hook (a cache hit counted as a failure by a
 * hook watching errors) and the error handler on each hit. It is sent as a reply now; a refusal still takes the
 * error path.
 */
t.test('a returned answer is sent as the reply: no onError hook, no error handler; a refusal still is an error', async (t) => {
  const seen = { onError: 0, handler: 0 }
  const app = Fastify()
  const errors = createErrorHandler('plain')
  app.setErrorHandler(function counted (error, request, reply) {
    seen.handler++
    errors(error, request, reply)
  })
  app.addHook('onError', function countError (_request, _reply, _error, done) {
    seen.onError++
    done()
  })
  const answer = new PolicyAnswer(200, { 'content-type': 'text/plain', 'x-from': 'policy' }, Buffer.from('answered'))
  const refusing: PolicyStep = (request) => request.headers['x-refuse'] === undefined ? undefined : new GatewayError('forbidden')
  const answering: PolicyStep = () => answer
  app.get('/answer', {
    onRequest: function chain (request, reply, done) { runSteps([refusing, answering], 0, request, reply, done) },
    handler: async () => 'handler',
  })
  const first = await app.inject('/answer')
  const second = await app.inject('/answer')
  for (const res of [first, second]) {
    t.same({ status: res.statusCode, type: res.headers['content-type'], from: res.headers['x-from'], body: res.body },
      { status: 200, type: 'text/plain', from: 'policy', body: 'answered' })
  }
  t.same(seen, { onError: 0, handler: 0 }, 'two answers, no error')
  const refused = await app.inject({ url: '/answer', headers: { 'x-refuse': '1' } })
  t.same({ status: refused.statusCode, body: refused.json() }, { status: 403, body: { error: 'Forbidden.' } })
  t.same(seen, { onError: 1, handler: 1 }, 'a refusal is still an error')
})
