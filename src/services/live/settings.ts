import { Type, type Static } from '@sinclair/typebox'
import type { GatewayConfig } from '../../config/types.js'
import { requiredServiceSettings, settingsProperties } from '../service-settings.js'
import { websocketSwitchSchema, type WebSocketSwitch } from '../websocket-settings.js'
import { CircuitBreakerSchema } from '../circuit-breaker-settings.js'
import { splitSchema } from '../split-settings.js'

/** `services.live` settings beside prefix, envelope, policies and routes: one declaration, schema and type. */
export const LiveSettingsSchema = Type.Object({
  max_body_bytes: Type.Integer({
    minimum: 0,
    maximum: 1073741824,
    default: 1048576,
    description: 'Largest request body relayed to a lane; a larger Content-Length answers 413 payload_too_large before the lane is contacted, and a streamed body crossing it is cut off with 413.',
  }),
  max_upstream_error_body_bytes: Type.Integer({
    minimum: 0,
    maximum: 1048576,
    default: 8192,
    description: 'How many bytes of a failing lane\'s body (4xx/5xx) are kept in upstream_body; longer bodies are cut and end with " [truncated]".',
  }),
  circuit_breaker: Type.Optional(Type.Object({ ...CircuitBreakerSchema.properties }, {
    additionalProperties: false,
    description: 'A circuit breaker per store lane, each with its own state: a failing lane gets no traffic for a while, its callers 503 circuit_open at once (off when absent).',
  })),
  split: Type.Optional(Type.Object({ ...splitSchema('store').properties }, {
    additionalProperties: false,
    description: 'Which version of a store\'s lane software a live request goes to, for stores whose lane has `next`: groups `lane` and `next`; rules, then weights by a hash of the store (default), client or organization (off when absent: every request to `lane`).',
  })),
  websocket: Type.Optional(Type.Unsafe<WebSocketSwitch>(websocketSwitchSchema(
    '`true` (or limits `{ max_message_bytes, idle_timeout_seconds }`): a GET of the live read route may be upgraded to a WebSocket, relayed to the store\'s lane once the route\'s chain passed (docs/websocket.md).',
  ))),
})

export type LiveSettings = Static<typeof LiveSettingsSchema>

/** JSON Schema properties of the live proxy's own settings (the loader checks them and fills the defaults). */
export const liveSettingsSchema = settingsProperties(LiveSettingsSchema)

/** The live settings of a snapshot's validated config (every default filled in by the loader). */
export function liveSettings (config: GatewayConfig): LiveSettings {
  return requiredServiceSettings(config, 'live', LiveSettingsSchema)
}
