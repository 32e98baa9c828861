/**
 * Every error the gateway can answer with, declared once: its HTTP status, the default human message, and how
 * the envelopes render it. It is part of the contract because a policy refuses with these codes (`ErrorCode`).
 * `docs/errors.md` lists the same codes; test/unit/errors-catalogue.test.ts keeps the two in step.
 *
 * `shape` decides how the `plain` envelope renders the error:
 * - `text`: `{error: <message>}` (the spec's `{error:'Unauthenticated.'}`, `{error:'Forbidden.'}`), plus fields;
 * - `code`: `{error: <code>, ...fields, message}` (the data-exchange envelopes, `invalid_token_type`).
 * The `exchange` envelope renders every code as `code`, except the spec's API authentication errors
 * (`authentication: true`: 401, 403, 429), which keep their fixed text as in `plain`.
 * The `oauth` envelope always renders `{error: <oauth code>, error_description: <message>, ...fields}` and the
 * `payments` envelope `{success:false, message, ...fields}` (except the 429 row, whose shape the spec fixes).
 */
export interface CatalogueEntry {
  /** HTTP status code. */
  readonly status: number
  /** Default message; callers may pass a more specific one. */
  readonly message: string
  /** How the plain and exchange envelopes render it (see above). */
  readonly shape: 'text' | 'code'
  /** The RFC 6749 `error` value this renders as in the oauth envelope, when it differs from the code. */
  readonly oauth?: string
  /** One of the spec's API authentication errors: rendered as `text` in the exchange envelope too. */
  readonly authentication?: true
  /**
   * The upstream's fault, not the gateway's (a mirrored 4xx/5xx, an unreachable upstream): logged at warn without
   * a stack, whatever its status, so a failing upstream does not flood the error log; no stack is captured.
   */
  readonly upstream?: true
}

export const catalogue = {
  // ---- OAuth 2.0 token endpoint (RFC 6749 §5.2 and the spec's token table) ----
  invalid_request: { status: 400, message: 'The request is missing a required parameter or is malformed.', shape: 'code' },
  unsupported_grant_type: { status: 400, message: 'Only the client_credentials grant type is supported; use grant_type=client_credentials.', shape: 'code' },
  invalid_scope: { status: 400, message: 'The requested scope is invalid or not authorized for this client.', shape: 'code' },
  invalid_client: { status: 401, message: 'Client authentication failed.', shape: 'code' },
  rate_limit_exceeded: { status: 429, message: 'Too many token requests; retry after the indicated number of seconds.', shape: 'code' },
  server_error: { status: 500, message: 'The server encountered an internal error.', shape: 'code' },

  // ---- API authentication and authorization ----
  unauthenticated: { status: 401, message: 'Unauthenticated.', shape: 'text', oauth: 'invalid_token', authentication: true },
  invalid_token_type: { status: 401, message: 'This endpoint does not accept this type of token.', shape: 'code', oauth: 'invalid_token' },
  auth_unavailable: { status: 503, message: 'The token could not be checked: its identity provider did not answer; retry shortly.', shape: 'code', oauth: 'temporarily_unavailable' },
  forbidden: { status: 403, message: 'Forbidden.', shape: 'text', oauth: 'insufficient_scope', authentication: true },
  too_many_requests: { status: 429, message: 'Too many requests', shape: 'text', oauth: 'rate_limit_exceeded', authentication: true },

  // ---- Generic HTTP ----
  bad_request: { status: 400, message: 'The request is malformed.', shape: 'code', oauth: 'invalid_request' },
  not_found: { status: 404, message: 'Not found.', shape: 'text', oauth: 'invalid_request' },
  method_not_allowed: { status: 405, message: 'Method not allowed.', shape: 'text', oauth: 'invalid_request' },
  payload_too_large: { status: 413, message: 'The request body is larger than this route accepts.', shape: 'code', oauth: 'invalid_request' },
  request_timeout: { status: 408, message: 'The request was not received in time.', shape: 'text', oauth: 'invalid_request' },
  header_too_large: { status: 431, message: 'Request header fields too large.', shape: 'text', oauth: 'invalid_request' },
  unsupported_media_type: { status: 415, message: 'Unsupported Content-Type.', shape: 'code', oauth: 'invalid_request' },
  transform_failed: { status: 400, message: 'The request body could not be transformed for this route.', shape: 'code', oauth: 'invalid_request' },
  validation_failed: { status: 422, message: 'The request body is invalid.', shape: 'code', oauth: 'invalid_request' },
  internal_error: { status: 500, message: 'Internal server error.', shape: 'text', oauth: 'server_error' },
  service_unavailable: { status: 503, message: 'The gateway is shutting down or a dependency is unavailable; retry shortly.', shape: 'text', oauth: 'temporarily_unavailable' },
  store_unavailable: { status: 503, message: 'The database is unavailable; retry shortly.', shape: 'code', oauth: 'temporarily_unavailable' },

  // ---- The fleet's config store (admin listener, /config/…) ----
  config_version_conflict: { status: 412, message: 'The config head is no longer the version in If-Match: pull it, merge, and push again.', shape: 'code', oauth: 'invalid_request' },
  config_invalid: { status: 422, message: 'The config is invalid; nothing was stored.', shape: 'code', oauth: 'invalid_request' },
  config_version_not_found: { status: 404, message: 'No such config version.', shape: 'code', oauth: 'invalid_request' },
  config_store_unavailable: { status: 503, message: 'The config store (PostgreSQL) is unreachable; retry shortly.', shape: 'code', oauth: 'temporarily_unavailable' },
  config_store_failed: { status: 500, message: 'The config store (PostgreSQL) answered with an error (a permission, a schema); the gateway\'s log and `sqlstate` say which.', shape: 'code', oauth: 'server_error' },

  // ---- Payments ----
  idempotency_key_invalid: { status: 400, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters.', shape: 'code' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was already used with a different request body.', shape: 'code' },
  idempotency_key_in_use: { status: 409, message: 'A request with this Idempotency-Key is still being processed; retry later.', shape: 'code' },
  payment_intent_not_found: { status: 404, message: 'Payment intent not found.', shape: 'code' },
  payment_intent_not_cancelable: { status: 409, message: 'The payment intent cannot be canceled in its current status.', shape: 'code' },
  connected_account_not_found: { status: 404, message: 'Connected account not found.', shape: 'code' },

  // ---- Data exchange (the spec's envelope table) ----
  // 502 when no answer came, the upstream's own 4xx/5xx (`withStatus`), or 503 with `Retry-After` for
  // `upstream_failure: 'circuit_open'` (upstream/failure.ts `circuitOpenError`): docs/errors.md#upstream-failures.
  upstream_error: { status: 502, message: 'The upstream returned an error or could not be reached.', shape: 'code', upstream: true },
  store_not_found: { status: 404, message: 'Store not found or not accessible.', shape: 'code' },
  report_not_found: { status: 404, message: 'Report not found.', shape: 'code' },
  report_param_validation_failed: { status: 422, message: 'The report parameters are invalid.', shape: 'code' },
  report_failed: { status: 422, message: 'The report failed to run.', shape: 'code' },
  cs_query_failed: { status: 502, message: 'The stream materialization query failed.', shape: 'code', upstream: true },
  fanout_operation_not_found: { status: 404, message: 'Fan-out operation not registered.', shape: 'code' },
  fanout_payload_validation_failed: { status: 422, message: 'The fan-out payload is invalid.', shape: 'code' },
  fanout_store_out_of_scope: { status: 422, message: 'Some stores are outside the caller\'s scope; nothing was dispatched.', shape: 'code' },
  fanout_not_previewed: { status: 409, message: 'The dispatch is not in a committable state.', shape: 'code' },
  fanout_dispatch_not_found: { status: 404, message: 'Dispatch not found.', shape: 'code' },
  fanout_too_many_stores: { status: 400, message: 'Too many stores in one dispatch.', shape: 'code' },
  hostfile_record_validation_failed: { status: 422, message: 'A host-file record failed validation.', shape: 'code' },
  hostfile_unknown_record_type: { status: 422, message: 'Unknown host-file record type.', shape: 'code' },
  hostfile_unorderable_record: { status: 422, message: 'The record cannot be ordered into a host file.', shape: 'code' },
  hostfile_too_many_records: { status: 400, message: 'Too many records in one host file.', shape: 'code' },
} as const satisfies Record<string, CatalogueEntry>

/** A catalogued error code. */
export type ErrorCode = keyof typeof catalogue

export function isErrorCode (value: string): value is ErrorCode {
  return Object.hasOwn(catalogue, value)
}
