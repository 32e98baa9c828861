// @ts-check
/**
 * An outside policy for lanegate, written as one plain ES module: no build step. gateway.yaml loads it with
 *
 *   plugins:
 *     - ./plugins/require-header.js
 *
 * and names it in any chain like a built-in policy:
 *
 *   - require-header: { header: X-Store-Channel, values: [pos, kiosk] }
 *
 * The JSDoc types come from `lanegate/plugin` (docs/plugins.md, "Writing a policy").
 */

/**
 * @typedef {{ header: string, values?: string[], per_organization?: Record<string, string[]> }} Options
 * @typedef {'header_missing' | 'header_value_refused'} Codes
 */

/** @type {import('lanegate/plugin').PolicyPlugin<Options, Codes>} */
const requireHeader = {
  name: 'require-header',
  description: 'Requires a request header, optionally with one of the listed values (per caller organization).',
  // JSON Schema of the options; the loader checks gateway.yaml against it and fills defaults.
  schema: {
    type: 'object',
    description: 'Which header the request must carry, and which values it may have.',
    additionalProperties: false,
    required: ['header'],
    properties: {
      header: { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$', description: 'The header name (any case).' },
      values: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 }, description: 'Values accepted; any value when absent.' },
      per_organization: {
        type: 'object',
        description: 'Organization id → the values that organization\'s callers may send (overrides `values`; needs auth first).',
        additionalProperties: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
      },
    },
  },
  // Codes of this policy's own refusals, rendered in the route's envelope like catalogued errors.
  errors: {
    header_missing: { status: 400, message: 'A required request header is missing.' },
    header_value_refused: { status: 403, message: 'This value of the header is not accepted here.' },
  },
  // Earlier policies this one needs, given its options.
  requires: (options) => options.per_organization === undefined ? [] : ['auth'],
  // Checks against the gateway's settings (the config's read-only view), reported by `lanegate validate` with the YAML path and line.
  check (options, settings) {
    const problems = []
    if (options.header.toLowerCase() === 'authorization') problems.push({ path: 'header', message: 'use the auth policy for Authorization' })
    for (const organization of Object.keys(options.per_organization ?? {})) {
      if (!settings.organizations.has(organization)) {
        problems.push({ path: `per_organization/${organization}`, message: `unknown organization "${organization}"` })
      }
    }
    return problems
  },
  summarize: (options) => `header ${options.header}${options.values ? ` in ${options.values.join(', ')}` : ''}`,
  // Runs once per route per config snapshot: precompute here, keep the step small and synchronous.
  create (options, context) {
    const name = options.header.toLowerCase()
    const anyValue = options.values === undefined ? undefined : new Set(options.values)
    const byOrganization = new Map(Object.entries(options.per_organization ?? {}).map(([org, values]) => [org, new Set(values)]))
    const missing = { message: `Send the ${options.header} header.` }
    const refused = { fields: { header: options.header } }
    return function requireHeaderStep (request) {
      const value = request.headers[name]
      if (typeof value !== 'string' || value === '') return context.refuse('header_missing', missing)
      const principal = context.principal(request)
      const allowed = (principal && byOrganization.get(principal.organizationId)) ?? anyValue
      if (allowed !== undefined && !allowed.has(value)) return context.refuse('header_value_refused', refused)
      return undefined
    }
  },
}

export default requireHeader
