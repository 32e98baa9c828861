/**
 * Durable Idempotency-Key records (Stripe-style, draft-ietf-httpapi-idempotency-key-header). A key is scoped
 * by the caller's client id and the route, so two clients (or two routes) never see each other's keys.
 *
 * Life of a key: `begin` inserts it `in_progress` atomically (INSERT … ON CONFLICT DO NOTHING: of concurrent
 * first requests exactly one gets `new`); the handler then either `complete`s it with the response to replay,
 * or `release`s it when the request failed in a way that must not be remembered (validation errors), so a
 * corrected retry runs. A process killed mid-request leaves the row `in_progress`; after `abandonAfterMs` the
 * row counts as abandoned and the next `begin` takes it over (the crashed request either committed nothing, or
 * committed an intent the client never heard about — the same outcome as a lost response without a key).
 * Rows live `ttlMs` after they were created and are deleted lazily by later `begin` calls.
 */

export interface IdempotencyScope {
  /** Client id of the caller (the token's `client_id`). */
  clientId: string
  /** The route id (`create_intent`, `cancel_intent`). */
  route: string
  /** The Idempotency-Key header value. */
  key: string
}

/** The response remembered for replay. */
export interface StoredResponse {
  statusCode: number
  body: unknown
}

export type BeginResult =
  /** This request owns the key: run it, then `complete` or `release`. */
  | { state: 'new' }
  /** Another request with this key is still running (or crashed less than `abandonAfterMs` ago). */
  | { state: 'in_progress' }
  /** Same key, same request fingerprint, finished: replay `response`. */
  | { state: 'completed', response: StoredResponse }
  /** Same key, different request fingerprint. */
  | { state: 'mismatch' }

export interface BeginOptions {
  /** sha256 (hex) of the canonical request (see docs/payments.md). */
  fingerprint: string
  /** Milliseconds since the epoch. */
  now: number
  /** How long a key is remembered (≥ 24 h). */
  ttlMs: number
  /** After this long an `in_progress` row is treated as left behind by a crash. */
  abandonAfterMs: number
}

export interface IdempotencyStore {
  begin (scope: IdempotencyScope, options: BeginOptions): Promise<BeginResult>
  /** Marks the key completed with the response to replay. Only an `in_progress` row is changed. */
  complete (scope: IdempotencyScope, response: StoredResponse, now: number): Promise<void>
  /** Forgets an `in_progress` key (the request failed before doing anything worth remembering). */
  release (scope: IdempotencyScope): Promise<void>
}
