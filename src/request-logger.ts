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

  constructor (private readonly parent: Logger, private readonly bindings: Bindings, private readonly req?: IncomingMessage) {}

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
    this.#child ??= this.parent.child(withTraceId(this.bindings, this.req))
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
 * fastify's `childLoggerFactory`: a deferred child per request. A route with its own log level (`logLevel`) gets
 * the eager child, whose level differs from the parent's.
 */
export function deferredRequestLoggerFactory (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions, req?: IncomingMessage): FastifyBaseLogger {
  if (options.level !== undefined) return logger.child(withTraceId(bindings, req), options)
  // Cast: fastify's logger type is pino's Logger under another name, and DeferredRequestLogger implements the part of
  // it fastify calls (pino's full type has overloads a deferring wrapper cannot spell).
  return new DeferredRequestLogger(logger as unknown as Logger, bindings, req) as unknown as FastifyBaseLogger
}
