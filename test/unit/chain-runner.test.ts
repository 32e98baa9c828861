import t from 'tap'
import Fastify, { type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction } from 'fastify'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import { runSteps } from '../../src/plugin/run-steps.js'
import type { PolicyStep } from '../../src/plugin/policy.js'

/** A bare app whose one route runs `steps` with the gateway's runner; `ran` records the steps that ran, in order. */
async function call (steps: Record<string, PolicyStep>) {
  const ran: string[] = []
  const chain = Object.entries(steps).map(([name, step]): PolicyStep => (request, reply) => {
    ran.push(name)
    return step(request, reply)
  })
  const app = Fastify({ logger: false })
  app.setErrorHandler(createErrorHandler())
  app.get('/', {
    onRequest: function runChain (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      runSteps(chain, 0, request, reply, done)
    },
  }, async function answer () {
    ran.push('handler')
    return { ok: true }
  })
  const res = await app.inject({ method: 'GET', url: '/' })
  await app.close()
  return { res, ran }
}

const tooMany = () => new GatewayError('too_many_requests', { fields: { retry_after: 7 }, headers: { 'Retry-After': '7' } })
const refusalBody = { error: 'Too many requests', retry_after: 7 }

t.test('synchronous and asynchronous steps that return nothing run in order, then the handler', async (t) => {
  const { res, ran } = await call({
    first: () => {},
    second: async () => { await new Promise((resolve) => setImmediate(resolve)) },
    third: () => {},
  })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ok: true })
  t.same(ran, ['first', 'second', 'third', 'handler'])
})

t.test('a returned GatewayError refuses the request; later steps and the handler do not run', async (t) => {
  const { res, ran } = await call({ first: () => {}, refuse: tooMany, after: () => {} })
  t.equal(res.statusCode, 429)
  t.same(res.json(), refusalBody)
  t.equal(res.headers['retry-after'], '7')
  t.same(ran, ['first', 'refuse'])
})

t.test('a promise resolving to a GatewayError refuses the request the same way', async (t) => {
  const { res, ran } = await call({ refuse: async () => tooMany(), after: () => {} })
  t.equal(res.statusCode, 429)
  t.same(res.json(), refusalBody)
  t.same(ran, ['refuse'])
})

t.test('a thrown GatewayError and a rejected promise refuse it the same way', async (t) => {
  const thrown = await call({ refuse: () => { throw tooMany() }, after: () => {} })
  t.equal(thrown.res.statusCode, 429)
  t.same(thrown.res.json(), refusalBody)
  t.same(thrown.ran, ['refuse'])
  const rejected = await call({ refuse: () => Promise.reject(tooMany()), after: () => {} })
  t.equal(rejected.res.statusCode, 429)
  t.same(rejected.res.json(), refusalBody)
  t.same(rejected.ran, ['refuse'])
})

t.test('a step that throws something that is not an Error still fails the request, as a bare 500', async (t) => {
  const { res, ran } = await call({ broken: () => { throw 'oops' }, after: () => {} })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'Internal server error.' })
  t.same(ran, ['broken'])
})
