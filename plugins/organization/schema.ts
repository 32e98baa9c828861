import { Type, type Static } from '../../src/plugin/index.js'

export const organizationSchema = Type.Object({
  param: Type.Optional(Type.String({ minLength: 1, description: 'Name of the path parameter (e.g. store_org_id) holding the target id.' })),
  query: Type.Optional(Type.String({ minLength: 1, description: 'Name of the query parameter (e.g. organization_id) holding the target id; an absent parameter passes (the handler validates required parameters).' })),
  not_found: Type.Boolean({
    default: false,
    description: 'When true (data-exchange routes), the target must be a store with an active install and a lane, and anything else answers 404 store_not_found; when false, an unreachable target answers 403.',
  }),
}, {
  description: 'The organization or store a request targets must be in the caller\'s organization tree. Set exactly one of param and query.',
  additionalProperties: false,
})

/** Options of the `organization` policy (defaults filled by the loader). */
export type OrganizationOptions = Static<typeof organizationSchema>
