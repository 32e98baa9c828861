import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import { mirroredError, unreachableError } from '../../src/upstream/failure.js'

/** An app whose routes throw the given errors, with its log lines collected. */
async function appThrowing (t: { teardown: (fn: () => unknown) => void }, errors: Record<string, () => Error>): Promise<{ lines: Array<Record<string, unknown>>, inject: (url: string) => Promise<unknown> }> {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>)
      callback()
    },
  })
  const app = Fastify({ logger: { level: 'info', stream } })
  app.setErrorHandler(createErrorHandler('exchange'))
  for (const [url, make] of Object.entries(errors)) app.get(url, async () => { throw make() })
  t.teardown(() => app.close())
  return { lines, inject: async (url) => (await app.inject({ url })).json() }
}

t.test('an unreachable upstream logs one warn line with the failure kind and no stack', async (t) => {
  const app = await appThrowing(t, { '/u': () => unreachableError('The upstream service', 'refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })) })
  t.same(await app.inject('/u'), { error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', upstream_body: '', message: 'The upstream service could not be reached.' })
  const failed = app.lines.filter((line) => line.code === 'upstream_error')
  t.same(failed.map((line) => ({ level: line.level, msg: line.msg, status: line.status, upstream_status: line.upstream_status, upstream_failure: line.upstream_failure, cause: line.cause, err: line.err })), [
    { level: 40, msg: 'The upstream service could not be reached.', status: 502, upstream_status: 0, upstream_failure: 'refused', cause: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9', err: undefined },
  ])
  t.notOk(JSON.stringify(app.lines).includes('    at '), 'no stack anywhere in the log')
})

t.test('a mirrored upstream 503 logs at warn, not error, without its body', async (t) => {
  const app = await appThrowing(t, { '/m': () => mirroredError('The lane software', 503, '<html>down</html>') })
  t.same(await app.inject('/m'), { error: 'upstream_error', upstream_status: 503, upstream_body: '<html>down</html>', message: 'The lane software answered 503.' })
  const failed = app.lines.filter((line) => line.code === 'upstream_error')
  t.same(failed.map((line) => [line.level, line.status, line.upstream_status, line.upstream_body]), [[40, 503, 503, undefined]])
})

t.test('a gateway 500 still logs at error with its stack', async (t) => {
  const app = await appThrowing(t, { '/e': () => new GatewayError('internal_error', { cause: new Error('boom') }) })
  await app.inject('/e')
  const failed = app.lines.filter((line) => line.code === 'internal_error')
  t.equal(failed.length, 1)
  t.equal(failed[0]?.level, 50)
  t.match((failed[0]?.err as { stack?: string } | undefined)?.stack, /at /)
})
