import { Writable } from 'node:stream'
import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import type { IncomingMessage } from 'node:http'
import { deferredRequestLogging, type DeferredRequestLogging } from '../../src/logging/request-logger.js'

/** A pino logger at `level` writing JSON lines into `lines`; `children` counts the children it made. */
function capture (level: string) {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  const logger = pino({ level }, sink)
  let children = 0
  const child = logger.child
  logger.child = function countedChild (this: typeof logger, ...args: Parameters<typeof child>) {
    children++
    return child.apply(this, args)
  } as typeof logger.child
  return { logger: logger as unknown as FastifyBaseLogger, lines, children: () => children }
}

/** `logger` as the gateway sets up fastify's: deferred children, each request's handed over by `genReqId` (here: `x-id`). */
function deferred (logger: FastifyBaseLogger): DeferredRequestLogging {
  const logging = deferredRequestLogging((req) => req.headers['x-id'] as string)
  logging.install(logger)
  return logging
}

/** fastify's order: the id is made from the request, then at once the child is asked for with the id bound. */
function requestChild (logger: FastifyBaseLogger, logging: DeferredRequestLogging, id: string, traceparent?: string, options = {}): FastifyBaseLogger {
  const req = { headers: { 'x-id': id, ...(traceparent === undefined ? {} : { traceparent }) } } as unknown as IncomingMessage
  return logger.child({ reqId: logging.genReqId(req) }, options)
}

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

t.test('a request that logs nothing at an enabled level never builds a child logger', async (t) => {
  const { logger, lines, children } = capture('warn')
  const logging = deferred(logger)
  const log = requestChild(logger, logging, 'r-1')
  log.info({ req: { url: '/x' } }, 'incoming request')
  log.debug('detail')
  t.equal(children(), 0)
  t.same(lines, [])
})

t.test('logging at an enabled level writes the line with the request id bound', async (t) => {
  const { logger, lines, children } = capture('warn')
  const logging = deferred(logger)
  const log = requestChild(logger, logging, 'r-2')
  log.warn({ code: 'x' }, 'first')
  log.error('second')
  t.equal(children(), 1, 'one child, built on first use')
  t.same(lines.map((l) => [l.reqId, l.msg, l.level]), [['r-2', 'first', 40], ['r-2', 'second', 50]])
  t.equal(lines[0]?.code, 'x')
})

t.test('level, isLevelEnabled and child behave like the eager child', async (t) => {
  const { logger, lines } = capture('info')
  const logging = deferred(logger)
  const log = requestChild(logger, logging, 'r-3')
  t.equal(log.level, 'info')
  const levels = log as unknown as { isLevelEnabled (level: string): boolean }
  t.equal(levels.isLevelEnabled('debug'), false)
  t.equal(levels.isLevelEnabled('info'), true)
  log.child({ step: 'auth' }).info('nested')
  t.same(lines.map((l) => [l.reqId, l.step, l.msg]), [['r-3', 'auth', 'nested']])
})

t.test('a route with its own log level gets an eager child at that level', async (t) => {
  const { logger, lines } = capture('warn')
  const logging = deferred(logger)
  const log = requestChild(logger, logging, 'r-4', undefined, { level: 'debug' })
  log.debug('shown')
  t.same(lines.map((l) => [l.reqId, l.msg]), [['r-4', 'shown']])
})

t.test('fastify\'s logger, deferred: a request\'s child is built on its first line, with the trace id of its request', async (t) => {
  const { logger, lines, children } = capture('warn')
  const logging = deferred(logger)
  const log = requestChild(logger, logging, 'r-5', TRACEPARENT)
  log.info('not at this level')
  t.equal(children(), 0, 'nothing logged at an enabled level: no child')
  log.warn('shown')
  t.equal(children(), 1)
  t.same(lines.map((l) => [l.reqId, l.trace_id, l.msg]), [['r-5', '4bf92f3577b34da6a3ce929d0e0e4736', 'shown']])
  log.child({ step: 'auth' }).error('nested')
  t.same(lines.at(-1), { ...lines.at(-1), reqId: 'r-5', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', step: 'auth', msg: 'nested' }, 'a child of it keeps both ids')
})

t.test('fastify\'s logger, deferred: every other child is pino\'s, made at once', async (t) => {
  const { logger, lines, children } = capture('warn')
  const logging = deferred(logger)
  const plain = logger.child({ module: 'upstream' })
  t.equal(children(), 1, 'no request handed over: an eager child')
  const nested = plain.child({ part: 'pool' })
  nested.warn('deep')
  t.same(lines.map((l) => [l.module, l.part, l.msg]), [['upstream', 'pool', 'deep']], 'a child of a child keeps its parent\'s bindings')
  const routeLevel = requestChild(logger, logging, 'r-6', TRACEPARENT, { level: 'debug' })
  routeLevel.debug('route level')
  t.same(lines.at(-1), { ...lines.at(-1), reqId: 'r-6', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', msg: 'route level' }, 'a route\'s own level: eager, with the trace id')
  // A request handed over but a child asked for another id (not what fastify does): that child is not the request's.
  logging.genReqId({ headers: { 'x-id': 'r-7', traceparent: TRACEPARENT } } as unknown as IncomingMessage)
  logger.child({ reqId: 'r-8' }).warn('other')
  t.equal(lines.at(-1)?.trace_id, undefined)
})
