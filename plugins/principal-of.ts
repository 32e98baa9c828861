import type { PolicyContext, Refusal } from '../src/plugin/index.js'

/**
 * The refusal for a step that needs the caller when `context.principal(request)` has none. Policies that need it
 * declare `requires: ['auth']`, so its absence is a chain built wrongly: a 500, never a pass.
 */
export function noPrincipal (context: PolicyContext): Refusal {
  return context.refuse('internal_error', { message: `route ${context.service}/${context.routeId} has no principal: auth must run first` })
}
