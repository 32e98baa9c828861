import { resolve } from 'node:path'
import type { GatewayConfig, ServiceConfig } from '../../config/types.js'

/** `services.content` settings beside prefix, envelope, policies and routes. */
export interface ContentSettings {
  /** Folder of YAML/JSON item files; relative paths are resolved against the config file's folder. */
  source_dir: string
  max_per_page: number
  default_per_page: number
  /** How often (ms) the folder is checked for changed files; 0 checks on every request. */
  reload_check_ms: number
}

export const contentSettingsSchema: Record<string, Record<string, unknown>> = {
  source_dir: {
    type: 'string',
    minLength: 1,
    default: './content',
    description: 'Folder of content files (*.yaml, *.yml, *.json; one item or an array of items each), relative to the config file\'s folder.',
  },
  max_per_page: { type: 'integer', minimum: 1, maximum: 1000, default: 100, description: 'Largest per_page a client may ask for.' },
  default_per_page: { type: 'integer', minimum: 1, maximum: 1000, default: 20, description: 'per_page when the client gives none (capped at max_per_page).' },
  reload_check_ms: {
    type: 'integer',
    minimum: 0,
    maximum: 3600000,
    default: 1000,
    description: 'How often the folder is checked for changed files (names, sizes, mtimes); changed files are reloaded.',
  },
}

/** Settings per config snapshot: a snapshot never changes, and resolving them per request showed in profiles. */
const settingsByConfig = new WeakMap<GatewayConfig, ContentSettings>()

/**
 * The content settings of a config with defaults filled in and `source_dir` made absolute (against the working
 * directory when the snapshot was first asked: the gateway never changes its working directory).
 */
export function contentSettingsOf (config: GatewayConfig): ContentSettings {
  let settings = settingsByConfig.get(config)
  if (settings === undefined) {
    settings = contentSettingsFrom(config.services.content)
    settingsByConfig.set(config, settings)
  }
  return settings
}

export function contentSettingsFrom (service: ServiceConfig | undefined): ContentSettings {
  const raw = (service ?? {}) as Partial<ContentSettings>
  const max = raw.max_per_page ?? 100
  return {
    source_dir: resolve(raw.source_dir ?? './content'),
    max_per_page: max,
    default_per_page: Math.min(raw.default_per_page ?? 20, max),
    reload_check_ms: raw.reload_check_ms ?? 1000,
  }
}
