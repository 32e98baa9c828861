import { Type, type Static } from '@sinclair/typebox'

/** The limits of one long-lived WebSocket connection (a route's `websocket:` object, or its service block's). */
export const WebSocketLimitsSchema = Type.Object({
  max_message_bytes: Type.Integer({
    minimum: 1,
    maximum: 67108864,
    default: 1048576,
    description: 'Largest WebSocket message relayed either way; a larger one closes the connection with 1009 (message too big).',
  }),
  idle_timeout_seconds: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 300,
    description: 'A connection with no message either way for this long is closed with 1001 (going away).',
  }),
}, { additionalProperties: false, description: 'Limits of the WebSocket connections of the route (or of the service\'s WebSocket routes).' })

export type WebSocketLimits = Static<typeof WebSocketLimitsSchema>

/** The defaults, for a route that allows upgrades with `websocket: true` and a block without limits of its own. */
export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = Object.freeze({ max_message_bytes: 1048576, idle_timeout_seconds: 300 })

/**
 * `websocket: true` or `websocket: { max_message_bytes, idle_timeout_seconds }`: one schema for both spellings
 * (JSON Schema applies `properties` only to the object), so a mistake reads as one message with its path.
 */
export function websocketSwitchSchema (description: string): Record<string, unknown> {
  const { properties } = WebSocketLimitsSchema
  return {
    type: ['boolean', 'object'],
    description,
    properties,
    additionalProperties: false,
  }
}

/** A route's or block's `websocket:` value as the loader left it. */
export type WebSocketSwitch = boolean | Partial<WebSocketLimits> | undefined

/**
 * The limits of a route that allows upgrades (`own` is not false/absent), its own over its block's over the defaults;
 * undefined when it does not allow them.
 */
export function websocketLimits (own: WebSocketSwitch, block: WebSocketSwitch): WebSocketLimits | undefined {
  if (own === undefined || own === false) return undefined
  const fromBlock = typeof block === 'object' ? block : {}
  const fromRoute = typeof own === 'object' ? own : {}
  return {
    max_message_bytes: fromRoute.max_message_bytes ?? fromBlock.max_message_bytes ?? DEFAULT_WEBSOCKET_LIMITS.max_message_bytes,
    idle_timeout_seconds: fromRoute.idle_timeout_seconds ?? fromBlock.idle_timeout_seconds ?? DEFAULT_WEBSOCKET_LIMITS.idle_timeout_seconds,
  }
}
