/**
 * The error codes a lanegate gateway answers with, as the client knows them: the HTTP status each comes with and,
 * for the codes rendered as fixed text (`{error:'Unauthenticated.'}`), that text.
 *
 * This is a copy of the server's catalogue (`src/plugin/catalogue.ts`), not an import of it: the client must stay
 * free of server code. `test/types/client-error-codes.ts` (compiled by `tsc` in `npm test`) asserts that the two
 * key sets are equal, so a code added to the server fails the build until it is added here, and
 * `test/unit/lanegate-client-errors.test.ts` checks that statuses and texts agree.
 */
export const lanegateErrorCodes = {
  invalid_request: { status: 400 },
  unsupported_grant_type: { status: 400 },
  invalid_scope: { status: 400 },
  invalid_client: { status: 401 },
  rate_limit_exceeded: { status: 429 },
  server_error: { status: 500 },
  unauthenticated: { status: 401, text: 'Unauthenticated.' },
  invalid_token_type: { status: 401 },
  auth_unavailable: { status: 503 },
  forbidden: { status: 403, text: 'Forbidden.' },
  too_many_requests: { status: 429, text: 'Too many requests' },
  bad_request: { status: 400 },
  not_found: { status: 404, text: 'Not found.' },
  method_not_allowed: { status: 405, text: 'Method not allowed.' },
  payload_too_large: { status: 413 },
  request_timeout: { status: 408, text: 'The request was not received in time.' },
  header_too_large: { status: 431, text: 'Request header fields too large.' },
  unsupported_media_type: { status: 415 },
  transform_failed: { status: 400 },
  validation_failed: { status: 422 },
  internal_error: { status: 500, text: 'Internal server error.' },
  service_unavailable: { status: 503, text: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' },
  store_unavailable: { status: 503 },
  config_version_conflict: { status: 412 },
  config_invalid: { status: 422 },
  config_version_not_found: { status: 404 },
  config_store_unavailable: { status: 503 },
  config_store_failed: { status: 500 },
  idempotency_key_invalid: { status: 400 },
  idempotency_key_reused: { status: 422 },
  idempotency_key_in_use: { status: 409 },
  payment_intent_not_found: { status: 404 },
  payment_intent_not_cancelable: { status: 409 },
  connected_account_not_found: { status: 404 },
  upstream_error: { status: 502 },
  store_not_found: { status: 404 },
  report_not_found: { status: 404 },
  report_param_validation_failed: { status: 422 },
  report_failed: { status: 422 },
  cs_query_failed: { status: 502 },
  fanout_operation_not_found: { status: 404 },
  fanout_payload_validation_failed: { status: 422 },
  fanout_store_out_of_scope: { status: 422 },
  fanout_not_previewed: { status: 409 },
  fanout_dispatch_not_found: { status: 404 },
  fanout_too_many_stores: { status: 400 },
  hostfile_record_validation_failed: { status: 422 },
  hostfile_unknown_record_type: { status: 422 },
  hostfile_unorderable_record: { status: 422 },
  hostfile_too_many_records: { status: 400 },
} as const satisfies Record<string, { readonly status: number, readonly text?: string }>

/** Every error code of the gateway's catalogue (kept equal to the server's by a compile-time check). */
export type LanegateErrorCode = keyof typeof lanegateErrorCodes

/**
 * The RFC 6749 / RFC 6750 `error` values the oauth envelope renders some codes as, mapped back to the code.
 * (`invalid_request`, `server_error` and `rate_limit_exceeded` are codes in their own right.)
 */
const oauthAliases: Readonly<Record<string, LanegateErrorCode>> = {
  invalid_token: 'unauthenticated',
  insufficient_scope: 'forbidden',
  temporarily_unavailable: 'service_unavailable',
}

const byText: ReadonlyMap<string, LanegateErrorCode> = new Map(
  Object.entries(lanegateErrorCodes).flatMap(([code, entry]) => 'text' in entry ? [[entry.text, code as LanegateErrorCode]] : []),
)

/** Whether `value` is a code of the catalogue. */
export function isLanegateErrorCode (value: unknown): value is LanegateErrorCode {
  return typeof value === 'string' && Object.hasOwn(lanegateErrorCodes, value)
}

/** When the status alone must decide: the generic code for it. */
function codeForStatus (status: number): LanegateErrorCode {
  switch (status) {
    case 400: return 'bad_request'
    case 401: return 'unauthenticated'
    case 403: return 'forbidden'
    case 404: return 'not_found'
    case 405: return 'method_not_allowed'
    case 408: return 'request_timeout'
    case 413: return 'payload_too_large'
    case 415: return 'unsupported_media_type'
    case 422: return 'validation_failed'
    case 429: return 'too_many_requests'
    case 431: return 'header_too_large'
    case 502: return 'upstream_error'
    case 503: return 'service_unavailable'
    default: return status >= 500 ? 'internal_error' : 'bad_request'
  }
}

/**
 * The code of an error answer, as well as the body tells it. The gateway's envelopes differ:
 * 1. `{error:'<code>', …}` (exchange envelope, oauth envelope): the code itself, or its RFC 6749/6750 alias;
 * 2. `{error:'Unauthenticated.'}` and the other fixed texts (plain envelope, and the payments 429): by the text;
 * 3. `{success:false, message}` (payments envelope) carries no code: the caller's `hints` (status → code for the
 *    endpoint called, e.g. 404 → `payment_intent_not_found`) decide, with `errors` meaning `validation_failed`
 *    and the catalogue's fixed idempotency messages recognised;
 * 4. otherwise the generic code for the status. The HTTP status is always the truth; the code refines it.
 */
export function codeOfAnswer (status: number, body: unknown, hints: Readonly<Partial<Record<number, LanegateErrorCode>>> = {}): LanegateErrorCode {
  if (typeof body === 'object' && body !== null) {
    const record = body as Record<string, unknown>
    if (typeof record.error === 'string') {
      if (isLanegateErrorCode(record.error)) return record.error
      const alias = oauthAliases[record.error] ?? byText.get(record.error)
      if (alias !== undefined) return alias
    }
    if (record.success === false) {
      if (status === 422 && typeof record.errors === 'object' && record.errors !== null) return 'validation_failed'
      const byMessage = paymentsMessageCode(record.message)
      if (byMessage !== undefined && lanegateErrorCodes[byMessage].status === status) return byMessage
    }
  }
  return hints[status] ?? codeForStatus(status)
}

/** The payments envelope's idempotency errors keep the catalogue's default messages (docs/payments.md). */
function paymentsMessageCode (message: unknown): LanegateErrorCode | undefined {
  if (typeof message !== 'string') return undefined
  if (message.startsWith('Idempotency-Key must be')) return 'idempotency_key_invalid'
  if (message.startsWith('This Idempotency-Key was already used')) return 'idempotency_key_reused'
  if (message.startsWith('A request with this Idempotency-Key is still being processed')) return 'idempotency_key_in_use'
  if (message.startsWith('The database is unavailable')) return 'store_unavailable'
  return undefined
}
