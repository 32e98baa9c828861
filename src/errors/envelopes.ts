import type { EnvelopeName } from '../plugin/envelope-name.js'
import type { GatewayError } from '../plugin/gateway-error.js'

export type ErrorBody = Record<string, unknown>

/** The body of `error` in one of the spec's shapes (plugin/envelope-name.ts says which is which). */
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
