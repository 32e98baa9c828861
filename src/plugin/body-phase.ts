import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ResponseBodyHook } from './body-hook.js'
import { readBodyAndKeepIt } from './read-body.js'
import { hooksOfRequest, responseHooksOf, type ResponseBodyHooks } from './response-phase.js'

/**
 * The body phase of the policy contract (docs/plugins.md, "Bodies"): what a step needs to change the bodies of a
 * relayed request (the live proxy, a `type: proxy` service). A step may
 * - read the caller's whole body (`context.readRequestBody`, bounded), and set the body sent upstream instead
 *   (`context.setRequestBody`);
 * - register a **response body hook** (`context.onResponseBody`): the relaying service then reads the upstream's
 *   answer whole, at most `maxBodyBytes` (a larger one is 502 `upstream_failure: too_large`, and is never read
 *   past the bound), gives it to the hooks, and sends what they return as the gateway's own answer (the head hooks
 *   then see it with `relayed: false`).
 * A request whose chain used neither relays as it always did, streaming: one property read decides.
 */

/** How a replaced request body is sent (`context.setRequestBody`). */
export interface RequestBodyOptions {
  /** The `content-type` sent with it. */
  readonly contentType?: string
  /** The method sent upstream instead of the caller's (a SOAP call is a POST whatever the caller used). */
  readonly method?: string
  /**
   * The path and query below the target's URL sent instead of the caller's; `''` is the target's URL itself (a
   * SOAP endpoint). Only where the answer is read whole (`onResponseBody`): else the caller's path goes.
   */
  readonly path?: string
}

/**
 * Sends `body` upstream instead of the caller's body (which the step has read). The request's `content-length` is
 * set to its size and `transfer-encoding` dropped, so the relay and any later step see the body that will be sent.
 */
export function setRequestBody (request: FastifyRequest, body: Buffer, options: RequestBodyOptions = {}): void {
  const hooks = hooksOfRequest(request)
  hooks.requestBody = body
  if (options.method !== undefined) hooks.requestMethod = options.method
  if (options.path !== undefined) hooks.requestPath = options.path
  const headers = request.raw.headers
  delete headers['transfer-encoding']
  headers['content-length'] = String(body.length)
  if (options.contentType !== undefined) headers['content-type'] = options.contentType
}

/**
 * Registers a response body hook for the request of `reply`; `maxBodyBytes` bounds the answer read for it (the
 * smallest bound of the hooks a chain registered applies).
 */
export function addResponseBodyHook (reply: FastifyReply, hook: ResponseBodyHook, maxBodyBytes: number): void {
  const hooks = hooksOfRequest(reply.request)
  if (hooks.body === undefined) hooks.body = { hooks: [hook], maxBodyBytes }
  else {
    hooks.body.hooks.push(hook)
    hooks.body.maxBodyBytes = Math.min(hooks.body.maxBodyBytes, maxBodyBytes)
  }
}

/** What the relaying service must honour for `request`: a replaced request body, response body hooks; or nothing. */
export interface BodyPhase {
  readonly requestBody: Buffer | undefined
  readonly requestMethod: string | undefined
  readonly requestPath: string | undefined
  readonly response: ResponseBodyHooks | undefined
}

/** The request's body phase, or undefined when no step used it (the relay then streams both ways). */
export function bodyPhaseOf (request: FastifyRequest): BodyPhase | undefined {
  const hooks = responseHooksOf(request)
  if (hooks === undefined || (hooks.requestBody === undefined && hooks.body === undefined)) return undefined
  return { requestBody: hooks.requestBody, requestMethod: hooks.requestMethod, requestPath: hooks.requestPath, response: hooks.body }
}

/**
 * Reads the caller's whole body, at most `limit` bytes: undefined when it is larger (refuse it with
 * `payload_too_large`; the rest is never read). The bytes stay in the request stream too, so a later reader (the
 * relay, another policy) reads the same body.
 */
export function readRequestBody (request: FastifyRequest, limit: number): Promise<Buffer | undefined> {
  return readBodyAndKeepIt(request.raw, limit)
}
