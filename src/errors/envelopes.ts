import type { GatewayError } from './gateway-error.js'

/**
 * The response body shapes of the spec. A service declares which one its routes use; the token endpoint always
 * uses `oauth`.
 * - `oauth`: `{error, error_description}` (RFC 6749 §5.2);
 * - `payments`: `{success:false, message}`; its 429 is `{error:'Too many requests', retry_after}`;
 * - `plain`: `{error:'Unauthenticated.'}`, `{error:'Forbidden.'}` (content service);
 * - `exchange`: the data-exchange envelopes `{error:<code>, ...fields, message}`, with the plain shapes for
 *   authentication errors.
 */
export const envelopeNames = ['oauth', 'payments', 'plain', 'exchange'] as const
export type EnvelopeName = typeof envelopeNames[number]

export type ErrorBody = Record<string, unknown>

export function renderError (error: GatewayError, envelope: EnvelopeName): ErrorBody {
  const entry = error.entry
  switch (envelope) {
    case 'oauth':
      return { error: entry.oauth ?? error.code, error_description: error.message, ...error.fields }
    case 'payments':
      if (error.code === 'too_many_requests') return { error: entry.message, ...error.fields }
      return { success: false, message: error.message, ...error.fields }
    case 'plain':
      // Text-shaped errors keep the spec's fixed wording here; the specific message is only logged.
      if (entry.shape === 'text') return { error: entry.message, ...error.fields }
      return { error: error.code, ...error.fields, message: error.message }
    case 'exchange':
      // The data-exchange envelope is `{error: <code>, message}` for every code but the spec's authentication
      // errors, which keep their fixed text; an internal error's cause (its specific message) is only logged.
      if (entry.shape === 'text' && 'authentication' in entry) return { error: entry.message, ...error.fields }
      return { error: error.code, ...error.fields, message: error.code === 'internal_error' ? entry.message : error.message }
  }
}
