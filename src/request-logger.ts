import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino'
import { traceOf } from './observability/trace-context.js'

type LevelMethod = (...args: unknown[]) => void

/**
 * A request's logger that becomes a real pino child (with the request id bound) only when something is logged at
 * an enabled level. fastify gives every request `logger.child({reqId})`, which serialises the bindings each time:
 * at the production level (`warn`) almost no request logs anything, so that work was spent on every request for
 * nothing. What gets logged is the same as with the eager child.
 */
class DeferredRequestLogger {
  #child: Logger | undefined

  /** `eager` makes the real child (pino's own `child` of `parent`). */
  constructor (private readonly parent: Logger, private readonly bindings: Bindings, private readonly req: IncomingMessage | undefined,
    private readonly eager: (bindings: Bindings) => Logger) {}

  get level (): string {
    return this.parent.level
  }

  set level (level: string) {
    this.#real().level = level
  }

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options) as FastifyBaseLogger
  }

  isLevelEnabled (level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level)
  }

  silent (): void {}

  #real (): Logger {
    this.#child ??= this.eager(withTraceId(this.bindings, this.req))
    return this.#child
  }

  #log (level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return
    ;(this.#real()[level] as LevelMethod)(...args)
  }

  trace (...args: unknown[]): void { this.#log('trace', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  fatal (...args: unknown[]): void { this.#log('fatal', args) }
}

/**
 * The request's bindings with its W3C trace id beside the request id, so every line of a request can be found
 * by either. The trace is worked out here, when the first line is logged, not for every request.
 */
function withTraceId (bindings: Bindings, req: IncomingMessage | undefined): Bindings {
  return req === undefined ? bindings : { ...bindings, trace_id: traceOf(req).traceId }
}

/**
 * The request whose id `genReqId` handed out last, until fastify asks its logger for that request's child: fastify
 * makes the id, then at once (synchronously, nothing runs between) the child logger, which is given the id but not
 * the request, and the trace id is read from the request.
 */
let handedOutId: string | undefined
let handedOutReq: IncomingMessage | undefined

/** Wraps fastify's `genReqId` so that the child logger fastify asks for next knows its request (deferRequestChildren). */
export function handingOverRequests (genReqId: (req: IncomingMessage) => string): (req: IncomingMessage) => string {
  return function genReqIdHandingOver (req) {
    const id = genReqId(req)
    handedOutId = id
    handedOutReq = req
    return id
  }
}

/**
 * Makes fastify's logger (`app.log`) give each request a deferred child (DeferredRequestLogger) through fastify's own
 * default child-logger factory, for an app whose `genReqId` hands its requests over (handingOverRequests). Not a
 * `childLoggerFactory` of lanegate's own (what it was before): fastify checks every child such a factory returns for
 * seven logger methods (`validateLogger`), 2.4k instructions per request under callgrind (docs/performance.md,
 * "Issue 24, the sixth session"), and skips that only for its default factory. A child asked
 * for anything but a request, or with a level or serializers of its own (a route's `logLevel`), is pino's, made at once.
 */
export function deferRequestChildren (log: FastifyBaseLogger, requestIdLabel = 'reqId'): void {
  const logger = log as unknown as Logger
  const original = logger.child as unknown as (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger
  const eager = (bindings: Bindings, options?: ChildLoggerOptions): Logger => original.call(logger, bindings, options)
  const patched = function child (this: Logger, bindings: Bindings, options?: ChildLoggerOptions): Logger | DeferredRequestLogger {
    // pino's children inherit from their parent: a child of a child finds this function too, and is pino's.
    if (this !== logger) return original.call(this, bindings, options)
    const forRequest = handedOutId !== undefined && bindings[requestIdLabel] === handedOutId
    const req = forRequest ? handedOutReq : undefined
    if (forRequest) handedOutId = handedOutReq = undefined
    if (!forRequest || options?.level !== undefined || options?.serializers !== undefined) return eager(withTraceId(bindings, req), options)
    return new DeferredRequestLogger(logger, bindings, req, eager)
  }
  // Cast: pino's `child` is generic over custom levels; the patched one keeps its contract for the parts fastify uses.
  logger.child = patched as unknown as Logger['child']
}
