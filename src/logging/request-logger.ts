import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino'
import { traceOf } from '../observability/trace-context.js'

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

/** What an app's fastify options and its logger need for deferred request loggers (deferredRequestLogging). */
export interface DeferredRequestLogging {
  /** fastify's `genReqId`: the given one, handing each request over to the child logger fastify asks for next. */
  genReqId: (req: IncomingMessage) => string
  /** Makes the app's logger (`app.log`, once fastify is built) hand out the deferred children. */
  install: (log: FastifyBaseLogger) => void
}

/**
 * Deferred request loggers through fastify's own default child-logger factory: fastify's logger gives each request a
 * DeferredRequestLogger. Not a `childLoggerFactory` of lanegate's own (what it was before): fastify checks every child
 * such a factory returns for seven logger methods (`validateLogger`), and skips that only for its default factory
 * (docs/performance.md, "The tricks in the code").
 *
 * The default factory gives the child the request id but not the request, whose trace id the child binds. So
 * `genReqId` hands the request over: fastify makes the id, then at once (synchronously, nothing runs between) the
 * child. A child asked for anything but the request handed over, or with a level or serializers of its own (a route's
 * `logLevel`), is pino's, made at once; so is a child of a child.
 */
export function deferredRequestLogging (genReqId: (req: IncomingMessage) => string, requestIdLabel = 'reqId'): DeferredRequestLogging {
  let handedOutId: string | undefined
  let handedOutReq: IncomingMessage | undefined
  return {
    genReqId: function genReqIdHandingOver (req) {
      const id = genReqId(req)
      handedOutId = id
      handedOutReq = req
      return id
    },
    install (log) {
      const logger = log as Logger
      const original: (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger = logger.child
      const eager = (bindings: Bindings, options?: ChildLoggerOptions): Logger => original.call(logger, bindings, options)
      const child = function child (this: Logger, bindings: Bindings, options?: ChildLoggerOptions): Logger | DeferredRequestLogger {
        // pino's children inherit from their parent: a child of a child finds this function too, and is pino's.
        if (this !== logger) return original.call(this, bindings, options)
        const forRequest = handedOutId !== undefined && bindings[requestIdLabel] === handedOutId
        const req = forRequest ? handedOutReq : undefined
        if (forRequest) handedOutId = handedOutReq = undefined
        if (!forRequest || options?.level !== undefined || options?.serializers !== undefined) return eager(withTraceId(bindings, req), options)
        return new DeferredRequestLogger(logger, bindings, req, eager)
      }
      // Cast: pino's `child` is generic over custom levels; this one keeps its contract for the parts fastify uses.
      logger.child = child as unknown as Logger['child']
    },
  }
}
