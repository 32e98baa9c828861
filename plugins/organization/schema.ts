/** Options of the `organization` policy. */
export interface OrganizationOptions {
  /** Path parameter holding the target organization or store id. */
  param?: string
  /** Query parameter holding the target organization or store id. */
  query?: string
  /** Answer an unreachable target with 404 store_not_found (data exchange) instead of 403. */
  not_found?: boolean
}

export const organizationSchema = {
  type: 'object',
  description: 'The organization or store a request targets must be in the caller\'s organization tree. Set exactly one of param and query.',
  additionalProperties: false,
  properties: {
    param: { type: 'string', minLength: 1, description: 'Name of the path parameter (e.g. store_org_id) holding the target id.' },
    query: { type: 'string', minLength: 1, description: 'Name of the query parameter (e.g. organization_id) holding the target id; an absent parameter passes (the handler validates required parameters).' },
    not_found: {
      type: 'boolean',
      default: false,
      description: 'When true (data-exchange routes), the target must be a store with an active install and a lane, and anything else answers 404 store_not_found; when false, an unreachable target answers 403.',
    },
  },
} as const
