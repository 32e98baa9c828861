import { Type, type Static } from '@sinclair/typebox'
import { backendTls, policyChain } from '../../config/schema.js'
import type { ServiceConfig } from '../../config/types.js'
import { blockSettings, settingsProperties } from '../service-settings.js'
import { CircuitBreakerSchema } from '../circuit-breaker-settings.js'
import { GROUP_NAME, SplitSchema } from '../split-settings.js'
import { MirrorSchema } from './mirror-settings.js'
import { WebSocketLimitsSchema, websocketSwitchSchema, type WebSocketSwitch } from '../websocket-settings.js'

/** Methods a proxied route may serve (upper case; `lanegate validate` refuses `get`). */
export const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/** An upper-case method; an enum (not a union of literals) so a mistake reads `must be one of: GET, …`. */
const Method = Type.Unsafe<typeof PROXY_METHODS[number]>({ type: 'string', enum: [...PROXY_METHODS], description: 'An HTTP method, upper case.' })

/**
 * One target: a URL, or `{ url, weight }`. One schema for both spellings (JSON Schema applies `pattern` to the
 * string and `properties` to the object), so a mistake gets one plain message with its path, not an `anyOf` tangle.
 */
const Target = Type.Unsafe<string | { url: string, weight: number }>({
  type: ['string', 'object'],
  description: 'A target: `http(s)://host:port[/base path]`, or `{ url, weight }`.',
  pattern: '^https?://',
  properties: {
    url: { type: 'string', pattern: '^https?://', description: 'http(s) URL of the target; a path in it is prefixed to every proxied path.' },
    weight: { type: 'integer', minimum: 1, maximum: 1000, default: 1, description: 'Share of requests relative to the other targets (default 1).' },
  },
  required: ['url'],
  additionalProperties: false,
})

const Upstream = Type.Object({
  targets: Type.Array(Target, { minItems: 1, description: 'Where requests go: one or more targets, balanced.' }),
  balance: Type.Union([Type.Literal('round_robin'), Type.Literal('least_connections')], {
    default: 'round_robin',
    description: '`round_robin` (smooth weighted) or `least_connections` (fewest requests in flight per weight).',
  }),
  max_sockets: Type.Integer({ minimum: 1, maximum: 1024, default: 32, description: 'Keep-alive connections per target at most (each target\'s concurrency cap).' }),
  timeouts: Type.Object({
    connect_ms: Type.Integer({ minimum: 1, maximum: 600000, default: 2000, description: 'No connection to a target within this: 502 upstream_failure timeout.' }),
    response_ms: Type.Integer({ minimum: 1, maximum: 600000, default: 15000, description: 'No response head within this from the start of an attempt (a request body\'s upload not counted: the clock starts again once it was sent): 502 upstream_failure timeout (never 504).' }),
    body_idle_ms: Type.Integer({ minimum: 1, maximum: 600000, default: 15000, description: 'Once the head arrived (and the request body was sent), an answer body silent this long is cut off.' }),
    stream_idle_ms: Type.Integer({ minimum: 1, maximum: 86400000, default: 300000, description: 'The same for an event stream (`text/event-stream`): cut only after this long without a byte.' }),
  }, { additionalProperties: false, default: {}, description: 'Upstream timeouts.' }),
  retry: Type.Object({
    attempts: Type.Integer({ minimum: 1, maximum: 10, default: 2, description: 'Attempts in all, the first included (1: never retried); each retry goes to a target not tried yet.' }),
    methods: Type.Array(Method, { uniqueItems: true, default: ['GET', 'HEAD', 'OPTIONS'], description: 'Methods that may be retried; a request with a body never is, nor one whose answer started.' }),
    budget: Type.Optional(Type.Object({
      percent: Type.Integer({ minimum: 0, maximum: 100, default: 20, description: 'Retries sent at most this share of the requests, in percent.' }),
      min_per_second: Type.Integer({ minimum: 0, maximum: 100000, default: 1, description: 'Retries allowed per second (per process) whatever the traffic.' }),
    }, { additionalProperties: false, description: 'A retry beyond the budget is not sent (the original failure is answered): retries cannot multiply the load on a failing backend (unbounded when absent).' })),
  }, { additionalProperties: false, default: {}, description: 'Retry of idempotent requests on another target after a no-answer failure.' }),
  health: Type.Object({
    passive: Type.Optional(Type.Object({
      failures: Type.Integer({ minimum: 1, maximum: 1000, default: 3, description: 'No-answer failures in a row that eject a target.' }),
      eject_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: 30, description: 'How long an ejected target is left out; it then returns on probation.' }),
    }, { additionalProperties: false, description: 'Passive health: eject a target after failures in a row (off when absent).' })),
    active: Type.Optional(Type.Object({
      path: Type.String({ pattern: '^/', description: 'Path probed with GET below each target\'s base path; a 2xx/3xx passes.' }),
      interval_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: 10, description: 'Seconds between probe rounds.' }),
    }, { additionalProperties: false, description: 'Active health: probe every target; a failing one is left out until a probe passes (off when absent).' })),
  }, { additionalProperties: false, default: {}, description: 'Health checks of the targets.' }),
  strip_prefix: Type.Boolean({ default: true, description: 'true: the service prefix is removed from the path sent upstream; false: sent as received.' }),
  credential: Type.Optional(Type.String({ minLength: 1, description: 'Sent upstream as the Authorization header (the caller\'s own never is).' })),
  tls: Type.Optional(backendTls),
  circuit_breaker: Type.Optional(CircuitBreakerSchema),
  outlier_ejection: Type.Optional(Type.Object({
    interval_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 10, description: 'How often the targets\' failure rates over the last interval are compared.' }),
    min_requests: Type.Integer({ minimum: 1, maximum: 1000000, default: 20, description: 'A target with fewer answers in the interval is neither judged nor counted among the siblings.' }),
    above_siblings_percent: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Ejected when its failure rate is at least this many percentage points above its siblings\' together.' }),
    failure_statuses: Type.Array(Type.Integer({ minimum: 100, maximum: 599 }), { uniqueItems: true, default: [500, 502, 503, 504], description: 'Answer statuses that count as failures (a no-answer failure always counts).' }),
    eject_seconds: Type.Integer({ minimum: 1, maximum: 86400, default: 30, description: 'How long an outlier is left out.' }),
    max_ejected_percent: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Never more than this share of the targets ejected as outliers at once (rounded down; at least one may be).' }),
  }, { additionalProperties: false, description: 'Outlier ejection: a target whose failure rate stands far above its siblings\' is ejected for a while (off when absent; needs two targets or more).' })),
}, { additionalProperties: false, description: 'The upstream the service relays to.' })

const UpstreamGroups = Type.Record(Type.String(), Upstream, {
  propertyNames: { pattern: GROUP_NAME },
  description: 'Named target groups (each with the settings of `upstream`, its own breakers, ejection and retry budget), chosen per request by `split`; instead of `upstream`.',
})

/** `services.<name>` settings of a `type: proxy` block beside prefix, envelope, policies and routes. */
export const ProxySettingsSchema = Type.Object({
  type: Type.Literal('proxy', { description: 'Selects the proxy service type (the block\'s name is free).' }),
  upstream: Type.Optional(Upstream),
  upstreams: Type.Optional(UpstreamGroups),
  split: Type.Optional(SplitSchema),
  mirror: Type.Optional(MirrorSchema),
  max_body_bytes: Type.Integer({
    minimum: 0,
    maximum: 1073741824,
    default: 1048576,
    description: 'Largest request body relayed; a larger Content-Length answers 413 before any target is contacted, a streamed body crossing it is cut off with 413.',
  }),
  max_upstream_error_body_bytes: Type.Integer({
    minimum: 0,
    maximum: 1048576,
    default: 8192,
    description: 'How many bytes of a failing upstream\'s body (4xx/5xx) are kept in upstream_body.',
  }),
  websocket: Type.Optional(Type.Object({ ...WebSocketLimitsSchema.properties }, {
    additionalProperties: false,
    description: 'Limits of the block\'s WebSocket routes (those with `websocket:` set), unless a route sets its own (docs/websocket.md).',
  })),
})

export type ProxySettings = Static<typeof ProxySettingsSchema>
export type ProxyUpstreamConfig = NonNullable<ProxySettings['upstream']>

/** One `routes:` entry of a proxy service: its methods, its path below the prefix and its own policies. */
export const ProxyRouteEntrySchema = Type.Object({
  methods: Type.Array(Method, { minItems: 1, uniqueItems: true, description: 'Methods the route serves (upper case).' }),
  path: Type.String({
    // Static segments, `:param` segments, and a final `*`: fastify's syntax, without regular expressions.
    pattern: '^/(([A-Za-z0-9._~-]+|:[A-Za-z_][A-Za-z0-9_]*)/)*([A-Za-z0-9._~-]+|:[A-Za-z_][A-Za-z0-9_]*|\\*)?$',
    description: 'Path below the prefix: static segments, `:name` parameters (seen by policies), and an optional final `*`.',
  }),
  policies: Type.Unsafe<Record<string, unknown>[]>(policyChain('The route\'s own policies, after the service\'s.')),
  split: Type.Optional(SplitSchema),
  mirror: Type.Optional(MirrorSchema),
  websocket: Type.Optional(Type.Unsafe<WebSocketSwitch>(websocketSwitchSchema(
    '`true` (or limits `{ max_message_bytes, idle_timeout_seconds }`): a GET of the route may be upgraded to a WebSocket, relayed to the upstream once the route\'s chain passed (docs/websocket.md).',
  ))),
}, { additionalProperties: false, description: 'One proxied route.' })

export type ProxyRouteEntry = Static<typeof ProxyRouteEntrySchema>

/** JSON Schema properties of a proxy block's own settings (the loader checks them and fills the defaults). */
export const proxySettingsSchema = settingsProperties(ProxySettingsSchema)

/** A validated proxy block (every default filled in by the loader). */
export function proxySettings (block: ServiceConfig): ProxySettings & ServiceConfig {
  return blockSettings(block, ProxySettingsSchema)
}
