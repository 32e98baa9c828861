import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { IdempotencyScope, IdempotencyStore } from '../../store/idempotency-store.js'
import type { PaymentsSettings } from './settings.js'

/** What a POST handler produced: the status and body to send (and remember for replay). */
export interface HandlerResult {
  statusCode: number
  body: unknown
}

const KEY = /^[\x20-\x7E]{1,255}$/

/** The request's Idempotency-Key, undefined when absent; 400 idempotency_key_invalid when malformed. */
export function idempotencyKeyOf (request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key']
  if (raw === undefined) return undefined
  if (typeof raw !== 'string' || !KEY.test(raw)) throw new GatewayError('idempotency_key_invalid')
  return raw
}

/**
 * The reference a create stores on the intent row: sha256 of (client, route, key), so the key itself is not
 * kept beside the intent and the same key from two clients never collides. Undefined without a key.
 */
export function idempotencyRefOf (request: FastifyRequest, clientId: string): string | undefined {
  const key = idempotencyKeyOf(request)
  if (key === undefined) return undefined
  return createHash('sha256').update(`${clientId}\0${request.gw.routeId}\0${key}`).digest('hex')
}

/** JSON with object keys sorted at every level, so key order never changes a fingerprint. */
export function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * sha256 (hex) of the canonical request: method, path (with the intent id; no query) and body. Reusing a key
 * for another intent's cancel is therefore a mismatch, never a replay of the first intent's response.
 */
export function requestFingerprint (request: FastifyRequest): string {
  const path = request.url.split('?')[0]
  return createHash('sha256').update(canonicalJson({ method: request.method, path, body: request.body ?? null })).digest('hex')
}

/**
 * Runs a POST handler under the Idempotency-Key rules (docs/payments.md): without a key it just runs; with
 * one, a finished request with the same fingerprint is replayed with `Idempotent-Replayed: true`, a different
 * fingerprint is 422, a request still running is 409. Only 2xx results are remembered: when `run` throws
 * (validation, 403/404/409, a failure) the key is released so a corrected retry runs. When the database itself
 * failed (503 `store_unavailable`), the release is retried in the background until the database answers again
 * (at most until the key would be abandoned anyway), so a retry after recovery completes instead of answering
 * 409. A create or cancel that succeeded but whose result could not be remembered is released too:
 * the intent row carries the key's reference (`idempotency_ref` for the create, `status_idempotency_ref` for the
 * cancel, written in the same transaction as the effect), so the retry finds that intent, or that it already
 * canceled it, rather than doing it again, and answers as the first attempt would have.
 */
export async function withIdempotency (request: FastifyRequest, reply: FastifyReply, store: IdempotencyStore,
  settings: PaymentsSettings, run: () => Promise<HandlerResult>): Promise<unknown> {
  const key = idempotencyKeyOf(request)
  const principal = request.gw.principal
  if (key === undefined || principal === undefined) return send(reply, await run())

  const scope: IdempotencyScope = { clientId: principal.clientId, route: request.gw.routeId, key }
  const begun = await store.begin(scope, {
    fingerprint: requestFingerprint(request),
    now: Date.now(),
    ttlMs: settings.idempotency_ttl_hours * 3600_000,
    abandonAfterMs: settings.idempotency_abandon_after_seconds * 1000,
  })
  switch (begun.state) {
    case 'mismatch':
      throw new GatewayError('idempotency_key_reused')
    case 'in_progress':
      throw new GatewayError('idempotency_key_in_use')
    case 'completed':
      reply.header('idempotent-replayed', 'true')
      return send(reply, begun.response)
  }

  let result: HandlerResult
  try {
    result = await run()
    await store.complete(scope, result, Date.now())
  } catch (error) {
    releaseKey(request, store, scope, Date.now() + settings.idempotency_abandon_after_seconds * 1000)
    throw error
  }
  return send(reply, result)
}

/** First wait between two attempts to release a key while the database is unavailable; doubles up to the max. */
const RELEASE_RETRY_MS = 250
const RELEASE_RETRY_MAX_MS = 2_000

/**
 * Releases the key now, or (the database unavailable) keeps trying in the background until `giveUpAt`, when the
 * abandon rule frees it anyway. Never throws and never fails the request a second time: the request's own error
 * is what the caller gets.
 */
function releaseKey (request: FastifyRequest, store: IdempotencyStore, scope: IdempotencyScope, giveUpAt: number, waitMs = RELEASE_RETRY_MS): void {
  store.release(scope).catch(function releaseFailed (error: unknown) {
    if (Date.now() + waitMs >= giveUpAt) {
      request.log.warn({ err: error }, 'idempotency key not released; it is freed when abandoned (idempotency_abandon_after_seconds)')
      return
    }
    // unref: a pending retry never holds a stopping process.
    setTimeout(() => releaseKey(request, store, scope, giveUpAt, Math.min(waitMs * 2, RELEASE_RETRY_MAX_MS)), waitMs).unref()
  })
}

function send (reply: FastifyReply, result: HandlerResult): unknown {
  reply.code(result.statusCode)
  return result.body
}
