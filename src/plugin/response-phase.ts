import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OutgoingHttpHeaders } from 'node:http'
import type { ResponseBodyHook } from './body-hook.js'

/**
 * The response phase of the policy contract (docs/plugins.md, "The response phase"). A step registers, for its own
 * request, a **head hook** (sees the status and headers before they are written; may change headers, or replace a
 * small buffered answer) and/or a **sent hook** (runs once the answer is sent or the connection closed: logging,
 * counting). Nothing is patched: the gateway calls the hooks where it writes the head — fastify's `onSend` for
 * in-process answers and refusals, the relay's take-over for relayed ones.
 *
 * A request whose chain registered no hook pays one property read in `onSend` and nothing else: no object, no
 * listener, no closure.
 */

/** The largest body (bytes) a head hook sees in `head.body` or may put in with `head.replace`: 64 KiB. */
export const RESPONSE_BODY_LIMIT = 64 * 1024

/** What a head hook sees and may change, just before the status and headers are written. */
export interface ResponseHead {
  /** The status about to be written. */
  readonly status: number
  /**
   * `true` for an answer relayed from an upstream (the live proxy, a `type: proxy` service): its body is streamed
   * after the head, so `body` is undefined and `replace` throws. `false` for an answer of the gateway itself.
   */
  readonly relayed: boolean
  /**
   * The whole body when it is buffered and at most `RESPONSE_BODY_LIMIT` bytes (an in-process answer, a refusal);
   * undefined for a streamed or larger body and for relayed answers.
   */
  readonly body: Buffer | undefined
  /** A header about to be written (name in any case), or undefined. */
  header (name: string): string | number | string[] | undefined
  /** Sets a header, replacing any value. */
  setHeader (name: string, value: string): void
  /** Removes a header (whoever set it: the handler, the upstream, an earlier step). */
  removeHeader (name: string): void
  /**
   * Replaces the answer of the gateway itself (not a relayed one: throws) with `status`, `body` (at most
   * `RESPONSE_BODY_LIMIT` bytes, else a RangeError) and these headers set over the current ones
   * (`content-length` is recomputed). Later head hooks see the replacement.
   */
  replace (status: number, body: string | Buffer, headers?: Record<string, string>): void
  /**
   * Asks for a copy of the body as it is sent, for the sent hooks (`sent.body`): a buffered answer's body, or a
   * relayed body copied chunk by chunk as it streams. Kept only up to `RESPONSE_BODY_LIMIT` bytes: a larger body
   * (or a streamed answer of the gateway itself, e.g. a file) gives `sent.body` undefined. For a cache.
   */
  captureBody (): void
}

/** What a sent hook sees: the answer as it went out. */
export interface SentResponse {
  readonly status: number
  /** The headers as written (lower-case names). */
  readonly headers: Readonly<Record<string, string | number | string[] | undefined>>
  readonly relayed: boolean
  /** `false` when the connection closed before the whole answer was sent. */
  readonly completed: boolean
  /** Milliseconds from the request's arrival to the answer's end (or the connection's close). */
  readonly elapsedMs: number
  /**
   * The whole body as sent, when a head hook asked for it (`head.captureBody()`) and it was at most
   * `RESPONSE_BODY_LIMIT` bytes and sent completely; else undefined.
   */
  readonly body: Buffer | undefined
}

/** A head hook: runs before the head is written. Built once in `create`, so a request costs no closure. */
export type ResponseHeadHook = (head: ResponseHead, request: FastifyRequest) => void
/** A sent hook: runs after the answer is sent (or the connection closed); it cannot change the answer. */
export type ResponseSentHook = (sent: SentResponse, request: FastifyRequest) => void

/** The hooks one request registered, in registration (chain) order. Kept on `request.gw.response`. */
export interface ResponseHooks {
  head: ResponseHeadHook[] | undefined
  sent: ResponseSentHook[] | undefined
  /** The headers a relayed answer was written with (set when the relay took the reply over). */
  relayed: OutgoingHttpHeaders | undefined
  /** The body copy a head hook asked for (`captureBody`): chunks so far, `false` once it went over the limit. */
  captured: Buffer[] | false | undefined
  capturedBytes: number
  /** The body a step set to send upstream instead of the caller's (`context.setRequestBody`; body-phase.ts). */
  requestBody: Buffer | undefined
  /** The method sent upstream instead of the caller's (`context.setRequestBody`). */
  requestMethod: string | undefined
  /** The path sent upstream instead of the caller's (`context.setRequestBody`). */
  requestPath: string | undefined
  /** The hooks that take a relayed answer whole (`context.onResponseBody`; body-phase.ts), with their bound. */
  body: ResponseBodyHooks | undefined
}

/** The response body hooks of one request and the largest answer body they are given (bytes). */
export interface ResponseBodyHooks {
  hooks: ResponseBodyHook[]
  maxBodyBytes: number
}

/** The request-scoped state the response phase keeps (`request.gw`). */
interface WithHooks { response?: ResponseHooks }

function hooksOf (reply: FastifyReply): ResponseHooks {
  return hooksOfRequest(reply.request)
}

/** The request's hooks object, made on first use. */
export function hooksOfRequest (request: FastifyRequest): ResponseHooks {
  const gw = request.gw as WithHooks
  let hooks = gw.response
  if (hooks === undefined) {
    hooks = { head: undefined, sent: undefined, relayed: undefined, captured: undefined, capturedBytes: 0, requestBody: undefined, requestMethod: undefined, requestPath: undefined, body: undefined }
    gw.response = hooks
  }
  return hooks
}

/** Registers a head hook for the request of `reply` (`context.onResponseHead`). */
export function addHeadHook (reply: FastifyReply, hook: ResponseHeadHook): void {
  const hooks = hooksOf(reply)
  if (hooks.head === undefined) hooks.head = [hook]
  else hooks.head.push(hook)
}

/** Registers a sent hook for the request of `reply` (`context.onResponseSent`): one `close` listener per request. */
export function addSentHook (reply: FastifyReply, hook: ResponseSentHook): void {
  const hooks = hooksOf(reply)
  if (hooks.sent !== undefined) {
    hooks.sent.push(hook)
    return
  }
  hooks.sent = [hook]
  reply.raw.once('close', function responseClosed () { runSentHooks(reply, hooks) })
}

function runSentHooks (reply: FastifyReply, hooks: ResponseHooks): void {
  const res = reply.raw
  const sent: SentResponse = {
    status: res.statusCode,
    // fastify and the relay pass their headers to writeHead, which keeps no copy: read them where they were kept.
    headers: hooks.relayed ?? reply.getHeaders(),
    relayed: hooks.relayed !== undefined,
    completed: res.writableFinished,
    elapsedMs: reply.elapsedTime,
    // `end` was called: the whole body went through (a relay cut off destroys the response instead). Not
    // `writableFinished`: an injected request's response (light-my-request) never reports it.
    body: hooks.captured === undefined || hooks.captured === false || !res.writableEnded ? undefined : Buffer.concat(hooks.captured),
  }
  for (const hook of hooks.sent ?? []) {
    try {
      hook(sent, reply.request)
    } catch (error) {
      reply.request.log.error({ err: error }, 'a response sent hook failed')
    }
  }
}

/**
 * fastify `onSend` hook of every service route: runs the head hooks the chain registered over the in-process
 * answer (a handler's reply, a refusal, a policy's answer). A request without head hooks passes straight on.
 */
export function runInProcessHeadHooks (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  const head = (request.gw as WithHooks | null)?.response?.head
  if (head === undefined) {
    done(null, payload)
    return
  }
  const hooks = request.gw.response as ResponseHooks
  const answer = new InProcessHead(reply, payload, hooks)
  runHeadHooks(head, answer, request)
  if (hooks.captured !== undefined) {
    const body = answer.body
    hooks.captured = body === undefined ? false : [body]
  }
  done(null, answer.payload)
}

/**
 * The relay's copy of a relayed body chunk, for a head hook that asked for the body (`captureBody`); nothing for a
 * request that did not. Called for each chunk written to the caller.
 */
export function captureRelayedChunk (hooks: ResponseHooks, chunk: Buffer): void {
  const captured = hooks.captured
  if (captured === undefined || captured === false) return
  hooks.capturedBytes += chunk.length
  if (hooks.capturedBytes > RESPONSE_BODY_LIMIT) hooks.captured = false
  else captured.push(Buffer.from(chunk))
}

/** The hooks `request`'s chain registered, if any (the relay asks before it writes a relayed head). */
export function responseHooksOf (request: FastifyRequest): ResponseHooks | undefined {
  return (request.gw as WithHooks | null)?.response
}

/**
 * Runs the head hooks the chain registered over a relayed answer's status and headers (`headers` is the object
 * about to be written, changed in place). Called by the relay's take-over, before the head is written.
 */
export function runRelayedHeadHooks (hooks: ResponseHooks, request: FastifyRequest, status: number, headers: OutgoingHttpHeaders): void {
  hooks.relayed = headers
  if (hooks.head !== undefined) runHeadHooks(hooks.head, new RelayedHead(status, headers, hooks), request)
}

function runHeadHooks (hooks: readonly ResponseHeadHook[], head: ResponseHead, request: FastifyRequest): void {
  for (const hook of hooks) {
    try {
      hook(head, request)
    } catch (error) {
      // The head is about to go out: a failing hook is logged and the answer is written as the hooks left it.
      request.log.error({ err: error }, 'a response head hook failed')
    }
  }
}

class InProcessHead implements ResponseHead {
  readonly relayed = false
  constructor (private readonly reply: FastifyReply, public payload: unknown, private readonly hooks: ResponseHooks) {}

  captureBody (): void {
    this.hooks.captured ??= []
  }

  get status (): number { return this.reply.statusCode }

  get body (): Buffer | undefined {
    const payload = this.payload
    if (typeof payload === 'string') return Buffer.byteLength(payload) <= RESPONSE_BODY_LIMIT ? Buffer.from(payload) : undefined
    if (Buffer.isBuffer(payload)) return payload.length <= RESPONSE_BODY_LIMIT ? payload : undefined
    if (payload === null || payload === undefined) return Buffer.alloc(0)
    return undefined
  }

  header (name: string): string | number | string[] | undefined {
    return this.reply.getHeader(name)
  }

  setHeader (name: string, value: string): void {
    this.reply.header(name, value)
  }

  removeHeader (name: string): void {
    this.reply.removeHeader(name)
    // A header set on the raw response (outside fastify's own map) goes too.
    this.reply.raw.removeHeader(name)
  }

  replace (status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
    const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length
    if (size > RESPONSE_BODY_LIMIT) throw new RangeError(`a replaced answer is at most ${RESPONSE_BODY_LIMIT} bytes (given ${size})`)
    const previous = this.payload as { destroy?: () => void } | null
    // A streamed body that is not sent is closed (a file handle, an upstream stream).
    if (previous !== null && typeof previous === 'object' && !Buffer.isBuffer(previous) && typeof previous.destroy === 'function') previous.destroy()
    this.reply.code(status)
    this.reply.removeHeader('content-length')
    for (const [name, value] of Object.entries(headers)) this.reply.header(name, value)
    this.payload = body
  }
}

class RelayedHead implements ResponseHead {
  readonly relayed = true
  readonly body = undefined
  constructor (readonly status: number, private readonly headers: OutgoingHttpHeaders, private readonly hooks: ResponseHooks) {}

  captureBody (): void {
    this.hooks.captured ??= []
  }

  header (name: string): string | number | string[] | undefined {
    return this.headers[name.toLowerCase()]
  }

  setHeader (name: string, value: string): void {
    this.headers[name.toLowerCase()] = value
  }

  removeHeader (name: string): void {
    delete this.headers[name.toLowerCase()]
  }

  replace (): void {
    throw new Error('a relayed answer is streamed from the upstream: its body cannot be replaced (change its headers)')
  }
}
