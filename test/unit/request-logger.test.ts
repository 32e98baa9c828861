import { Writable } from 'node:stream'
import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { deferredRequestLoggerFactory } from '../../src/request-logger.js'

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

t.test('a request that logs nothing at an enabled level never builds a child logger', async (t) => {
  const { logger, lines, children } = capture('warn')
  const log = deferredRequestLoggerFactory(logger, { reqId: 'r-1' }, {})
  log.info({ req: { url: '/x' } }, 'incoming request')
  log.debug('detail')
  t.equal(children(), 0)
  t.same(lines, [])
})

t.test('logging at an enabled level writes the line with the request id bound', async (t) => {
  const { logger, lines, children } = capture('warn')
  const log = deferredRequestLoggerFactory(logger, { reqId: 'r-2' }, {})
  log.warn({ code: 'x' }, 'first')
  log.error('second')
  t.equal(children(), 1, 'one child, built on first use')
  t.same(lines.map((l) => [l.reqId, l.msg, l.level]), [['r-2', 'first', 40], ['r-2', 'second', 50]])
  t.equal(lines[0]?.code, 'x')
})

t.test('level, isLevelEnabled and child behave like the eager child', async (t) => {
  const { logger, lines } = capture('info')
  const log = deferredRequestLoggerFactory(logger, { reqId: 'r-3' }, {})
  t.equal(log.level, 'info')
  const levels = log as unknown as { isLevelEnabled (level: string): boolean }
  t.equal(levels.isLevelEnabled('debug'), false)
  t.equal(levels.isLevelEnabled('info'), true)
  log.child({ step: 'auth' }).info('nested')
  t.same(lines.map((l) => [l.reqId, l.step, l.msg]), [['r-3', 'auth', 'nested']])
})

t.test('a route with its own log level gets an eager child at that level', async (t) => {
  const { logger, lines } = capture('warn')
  const log = deferredRequestLoggerFactory(logger, { reqId: 'r-4' }, { level: 'debug' })
  log.debug('shown')
  t.same(lines.map((l) => [l.reqId, l.msg]), [['r-4', 'shown']])
})
