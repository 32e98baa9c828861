import type { GatewayConfig } from '../../config/types.js'

/** `services.live` settings beside prefix, envelope, policies and routes. */
export interface LiveSettings {
  /** Largest request body relayed to a lane (413 payload_too_large above, checked before and while streaming). */
  max_body_bytes: number
  /** How much of a failing lane's body is kept in `upstream_body`. */
  max_upstream_error_body_bytes: number
}

export const LIVE_DEFAULTS: LiveSettings = {
  max_body_bytes: 1048576,
  max_upstream_error_body_bytes: 8192,
}

/** JSON Schema properties of the live proxy's own settings (second validation pass). */
export const liveSettingsSchema: Record<string, Record<string, unknown>> = {
  max_body_bytes: {
    type: 'integer',
    minimum: 0,
    maximum: 1073741824,
    default: LIVE_DEFAULTS.max_body_bytes,
    description: 'Largest request body relayed to a lane; a larger Content-Length answers 413 payload_too_large before the lane is contacted, and a streamed body crossing it is cut off with 413.',
  },
  max_upstream_error_body_bytes: {
    type: 'integer',
    minimum: 0,
    maximum: 1048576,
    default: LIVE_DEFAULTS.max_upstream_error_body_bytes,
    description: 'How many bytes of a failing lane\'s body (4xx/5xx) are kept in upstream_body; longer bodies are cut and end with " [truncated]".',
  },
}

/** The live settings of a snapshot's config, defaults filled in (the bare test apps skip ajv's useDefaults). */
export function liveSettings (config: GatewayConfig): LiveSettings {
  const block = (config.services.live ?? {}) as Partial<LiveSettings>
  return {
    max_body_bytes: block.max_body_bytes ?? LIVE_DEFAULTS.max_body_bytes,
    max_upstream_error_body_bytes: block.max_upstream_error_body_bytes ?? LIVE_DEFAULTS.max_upstream_error_body_bytes,
  }
}
