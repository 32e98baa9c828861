import { Type, type Static } from '../../src/plugin/index.js'

const NAME = '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$'
/** A dotted path into a JSON body: `order.lines.0.sku` (a number walks into an array). */
const PATH = '^[^.]+(\\.[^.]+)*$'
const TEMPLATE_DESCRIPTION = 'The value: text, where `{{principal.client_id}}`, `{{principal.subject}}`, `{{principal.organization_id}}`, `{{params.NAME}}` and `{{query.NAME}}` are replaced by the request\'s (principal fields need `auth` earlier in the chain).'

const names = (what: string) => Type.Object({
  set: Type.Optional(Type.Record(Type.String({ pattern: NAME }), Type.String({ pattern: '^[\\x20-\\x7e\\t]*$', description: TEMPLATE_DESCRIPTION }), {
    description: `${what} set (replacing any value), by name.`,
  })),
  remove: Type.Optional(Type.Array(Type.String({ pattern: NAME, description: 'A name.' }), { uniqueItems: true, description: `${what} removed.` })),
  rename: Type.Optional(Type.Record(Type.String({ pattern: NAME }), Type.String({ pattern: NAME, description: 'The new name.' }), {
    description: `${what} renamed: old name → new name (absent ones are left alone).`,
  })),
}, { additionalProperties: false, minProperties: 1, description: `Changes to the ${what.toLowerCase()}: rename, then remove, then set.` })

const Format = (description: string) => Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('xml')], { description }))

const jsonBody = (what: string, from: string, to: string) => Type.Object({
  from: Format(`The format ${from} sends: \`json\` (default) or \`xml\` (read into JSON as \`xml:\` describes).`),
  to: Format(`The format ${to} gets: \`json\` (default) or \`xml\` (written from JSON as \`xml:\` describes).`),
  rename: Type.Optional(Type.Record(Type.String({ pattern: PATH }), Type.String({ pattern: PATH, description: 'The new dotted path.' }), {
    description: `Fields of the ${what} moved: old dotted path → new dotted path (an absent field is left alone).`,
  })),
  remove: Type.Optional(Type.Array(Type.String({ pattern: PATH, description: 'A dotted path.' }), { uniqueItems: true, description: `Fields removed from the ${what}.` })),
  set: Type.Optional(Type.Record(Type.String({ pattern: PATH }), Type.Unknown({ description: 'Any JSON value.' }), {
    description: `Fields of the ${what} set to a JSON value, by dotted path (objects on the way are made).`,
  })),
  map: Type.Optional(Type.String({
    minLength: 1,
    description: `A JSONata expression (https://jsonata.org) giving the whole new ${what} from the old one; \`$principal\`, \`$params\`, \`$query\` (and \`$status\` on the response) are in scope. Runs after rename, remove and set.`,
  })),
}, { additionalProperties: false, minProperties: 1, description: `Changes to the ${what}: read (\`from\`), rename, remove, set, map, written (\`to\`).` })

export const transformSchema = Type.Object({
  max_body_bytes: Type.Integer({
    minimum: 1,
    maximum: 67108864,
    default: 1048576,
    description: 'Largest body read whole for a body transform, each way: a larger request is 413, a larger answer 502 `upstream_failure: too_large` (read no further).',
  }),
  map_timeout_ms: Type.Integer({
    minimum: 1,
    maximum: 10000,
    default: 1000,
    description: 'Longest time one evaluation of a `map` expression may run (wall-clock time, checked at each step of the expression; a process paused by the host or a long GC counts too): past it the request is refused 500 `transform_timeout`.',
  }),
  request: Type.Optional(Type.Object({
    headers: Type.Optional(names('Request headers')),
    query: Type.Optional(names('Query parameters')),
    body: Type.Optional(jsonBody('request body', 'the caller', 'the upstream')),
  }, { additionalProperties: false, minProperties: 1, description: 'Changes to the request before it is relayed.' })),
  response: Type.Optional(Type.Object({
    headers: Type.Optional(names('Response headers')),
    body: Type.Optional(jsonBody('response body', 'the upstream', 'the caller')),
  }, { additionalProperties: false, minProperties: 1, description: 'Changes to the upstream\'s 2xx answer before the caller gets it.' })),
  soap: Type.Optional(Type.Object({
    version: Type.Union([Type.Literal('1.1'), Type.Literal('1.2')], { description: 'SOAP version: `1.1` (text/xml, SOAPAction header) or `1.2` (application/soap+xml with an `action` parameter).' }),
    namespace: Type.String({ minLength: 1, description: 'The namespace of the operation element (the WSDL\'s target namespace).' }),
    operation: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$', description: 'The operation called: the name of the Body\'s element.' }),
    action: Type.Optional(Type.String({ pattern: '^[\\x21\\x23-\\x7e]*$', description: 'The SOAP action (the WSDL\'s soapAction): the SOAPAction header with 1.1, the `action` media-type parameter with 1.2.' })),
  }, { additionalProperties: false, description: 'Calls a SOAP operation: the (reshaped) JSON request becomes the envelope\'s Body, sent by POST; the answer\'s Body content becomes JSON; a Fault becomes upstream_error.' })),
  xml: Type.Object({
    attribute_prefix: Type.String({ default: '@', maxLength: 8, description: 'Prefix of the JSON keys that are XML attributes (`@id`).' }),
    text_key: Type.String({ default: '#text', minLength: 1, maxLength: 32, description: 'JSON key of an element\'s text when it also has attributes.' }),
    arrays: Type.Array(Type.String({ pattern: PATH, description: 'A dotted element path from the root (`Envelope.Body.Items.Item`).' }), {
      uniqueItems: true,
      default: [],
      description: 'Elements that are always JSON arrays, even when they occur once (a repeated element always is).',
    }),
    namespaces: Type.Union([Type.Literal('keep'), Type.Literal('strip')], {
      default: 'keep',
      description: '`keep`: names keep their prefix (`s:Body`) and `xmlns` attributes stay; `strip`: prefixes and `xmlns` attributes are dropped.',
    }),
  }, { additionalProperties: false, default: {}, description: 'How XML bodies map to JSON and back (`from: xml` / `to: xml`).' }),
}, {
  description: 'Reshapes relayed requests and answers: headers, query parameters, and JSON bodies (fields, or a JSONata mapping).',
  additionalProperties: false,
})

/** Options of the `transform` policy. */
export type TransformOptions = Static<typeof transformSchema>
export type NameChanges = NonNullable<NonNullable<TransformOptions['request']>['headers']>
export type JsonBodyChanges = NonNullable<NonNullable<TransformOptions['request']>['body']>
