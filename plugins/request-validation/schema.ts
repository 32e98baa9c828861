import { Type, type Static } from '../../src/plugin/index.js'

/** A JSON Schema given in gateway.yaml; checked as a schema (and compiled) by the policy's `check`. */
const jsonSchema = (description: string) => Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', description }))

export const requestValidationSchema = Type.Object({
  query: jsonSchema('JSON Schema (draft-07) of the query parameters, as an object of strings (arrays when repeated); values are coerced to the schema\'s types for the check only.'),
  body: jsonSchema('JSON Schema (draft-07) of the JSON request body; the body is read (up to what the route accepts), checked and passed on unchanged.'),
  headers: jsonSchema('JSON Schema (draft-07) of the request headers, as an object with lower-case names; values coerced for the check only.'),
}, {
  description: 'Checks the query, JSON body and headers against JSON Schemas before the handler or the upstream is called; a mismatch is a 400 naming the path and keyword.',
  additionalProperties: false,
  minProperties: 1,
})

/** Options of the `request-validation` policy. */
export type RequestValidationOptions = Static<typeof requestValidationSchema>
