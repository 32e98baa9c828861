import { PassThrough } from 'node:stream'
import type { Dispatcher } from 'undici'
import { GatewayError } from '../plugin/gateway-error.js'
import { readUpstreamBody } from './error-body.js'
import { failureKindOf, unreachableError, type UpstreamFailureKind } from './failure.js'
import type { Target } from './target.js'

/** One request of `callUpstream` on one target, its answer read whole. */
export interface BufferedRequest {
  readonly path: string
  readonly method: Dispatcher.HttpMethod
  readonly headers: Record<string, string>
  readonly body?: string | Buffer
  /** A longer 2xx/3xx body is an `overLimit` failure, not read past the bound. */
  readonly maxBodyBytes: number
  /** The body is read and kept nowhere (a mirrored copy's answer): any size, and the answer's bytes are empty. */
  readonly discardBody?: boolean
  readonly overLimit: UpstreamFailureKind
  /** How much of a 4xx/5xx body is kept, decoded (error-body.ts). */
  readonly maxErrorBodyBytes: number
  /** Milliseconds this attempt may take, head and body: past them it fails `timeout`. */
  readonly timeoutMs: number
  /** Aborts the attempt (the call's own signal); it fails like a network failure. */
  readonly signal?: AbortSignal
}

/** A target's answer: for 4xx/5xx the bounded, decoded body's text and its UTF-8 bytes; else the bytes as received. */
export class BufferedAnswer {
  constructor (readonly status: number, readonly headers: Record<string, string | string[] | undefined>, readonly bodyBytes: Buffer, private text?: string) {}

  /** The body as UTF-8 text, decoded when first asked (the buffered relay passes the bytes on and never asks). */
  get body (): string {
    this.text ??= this.bodyBytes.toString('utf8')
    return this.text
  }
}

/** A failure after the target's head arrived (already counted as its answer), and whether a retry may help. */
export class AfterHead extends Error {
  constructor (readonly failure: GatewayError, readonly retriable: boolean) {
    super(failure.message)
  }
}

/**
 * Sends `request` to `target` with undici's `dispatch` and collects the answer's body into a bounded list of
 * chunks, as the streaming relay hands chunks to the caller (relay.ts): no body stream, no async iterator, one
 * timer for the whole attempt. Resolves with the answer once its head arrived and its body ended; rejects with a
 * GatewayError before the head (the target's failure), or an AfterHead after it. `onHead` runs once a valid head
 * arrived (the caller counts it as the target's answer).
 */
export function bufferedAttempt (target: Target, label: string, request: BufferedRequest, onHead: (status: number) => void): Promise<BufferedAnswer> {
  return new Promise((resolve, reject) => {
    const handler = new BufferedHandler(label, request, onHead, resolve, reject)
    target.pool.dispatch({
      path: target.basePath + request.path || '/',
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      // The attempt's own timer bounds the whole exchange: undici's would be two more per request.
      headersTimeout: 0,
      bodyTimeout: 0,
    }, handler)
  })
}

class BufferedHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  private status = 0
  private headers: Record<string, string | string[] | undefined> = {}
  private readonly chunks: Buffer[] = []
  private size = 0
  private errorBody: PassThrough | undefined
  private complete = false
  private settled = false
  private timedOut = false
  private readonly timer: NodeJS.Timeout
  private readonly onAbort: (() => void) | undefined

  constructor (
    private readonly label: string,
    private readonly request: BufferedRequest,
    private readonly onHead: (status: number) => void,
    private readonly resolve: (answer: BufferedAnswer) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true
      this.abort(Object.assign(new Error(`no whole answer within ${request.timeoutMs} ms`), { name: 'TimeoutError' }))
    }, request.timeoutMs).unref()
    const signal = request.signal
    if (signal !== undefined) {
      this.onAbort = () => { this.abort(signal.reason) }
      if (signal.aborted) queueMicrotask(this.onAbort)
      else signal.addEventListener('abort', this.onAbort, { once: true })
    }
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.settled) controller.abort(new GatewayError('upstream_error'))
  }

  onResponseStart (controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200 && statusCode >= 100) return
    if (this.settled) return
    if (statusCode < 100 || statusCode > 599) {
      // Not an answer: the target's failure, as when no head came.
      this.fail(unreachableError(this.label, 'protocol', undefined, `${this.label} answered with an invalid status.`))
      return
    }
    this.status = statusCode
    this.headers = headers
    this.onHead(statusCode)
    if (statusCode >= 400) {
      this.collectErrorBody(controller, headers)
      return
    }
    // A body declared larger than the bound is not read at all; another target would answer the same.
    if (this.request.discardBody !== true && Number(headers['content-length'] ?? 0) > this.request.maxBodyBytes) this.fail(new AfterHead(this.overLimit(), false))
  }

  onResponseData (_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.errorBody !== undefined) {
      if (!this.errorBody.destroyed) this.errorBody.write(chunk)
      return
    }
    if (this.settled || this.request.discardBody === true) return
    this.size += chunk.length
    if (this.size > this.request.maxBodyBytes) {
      this.fail(new AfterHead(this.overLimit(), false))
      return
    }
    this.chunks.push(chunk)
  }

  onResponseEnd (): void {
    this.complete = true
    if (this.errorBody !== undefined) {
      this.errorBody.end()
      return
    }
    if (this.settled) return
    this.settle()
    const bytes = this.chunks.length === 1 ? this.chunks[0] as Buffer : Buffer.concat(this.chunks, this.size)
    this.resolve(new BufferedAnswer(this.status, this.headers, bytes))
  }

  onResponseError (_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.errorBody !== undefined) {
      this.errorBody.destroy(error)
      return
    }
    if (this.settled) return
    const kind = this.timedOut ? 'timeout' : failureKindOf(error)
    if (this.status === 0) this.fail(unreachableError(this.label, kind, error))
    // Cut short mid-body: another attempt may get it whole.
    else this.fail(new AfterHead(this.timedOut ? unreachableError(this.label, kind, error) : unreachableError(this.label, kind, error, `${this.label} closed the connection while answering.`), true))
  }

  /** A 4xx/5xx: a bounded, decoded part of its body is read (the rest is not), as the relay reads one. */
  private collectErrorBody (controller: Dispatcher.DispatchController, headers: Record<string, string | string[] | undefined>): void {
    const body = new PassThrough()
    this.errorBody = body
    body.on('close', () => { if (!this.complete) controller.abort(new GatewayError('upstream_error')) })
    void readUpstreamBody(body, headers['content-encoding'], this.request.maxErrorBodyBytes).then((text) => {
      if (this.settled) return
      this.settle()
      this.resolve(new BufferedAnswer(this.status, headers, Buffer.from(text), text))
    })
  }

  private overLimit (): GatewayError {
    return unreachableError(this.label, this.request.overLimit, undefined, `${this.label} answered with a body larger than ${this.request.maxBodyBytes} bytes.`)
  }

  /** Ends the attempt from outside (its timer, the call's signal): undici then reports the abort's error. */
  private abort (reason: unknown): void {
    const error = reason instanceof Error ? reason : new Error(String(reason))
    if (this.controller !== undefined) this.controller.abort(error)
    else if (!this.settled) this.fail(unreachableError(this.label, this.timedOut ? 'timeout' : failureKindOf(error), error))
  }

  private fail (error: GatewayError | AfterHead): void {
    if (this.settled) return
    this.settle()
    this.controller?.abort(error instanceof AfterHead ? error.failure : error)
    this.reject(error)
  }

  private settle (): void {
    this.settled = true
    clearTimeout(this.timer)
    if (this.onAbort !== undefined) this.request.signal?.removeEventListener('abort', this.onAbort)
  }
}
