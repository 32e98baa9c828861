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
