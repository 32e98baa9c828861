import { resolve } from 'node:path'
import { Type, type Static } from '@sinclair/typebox'
import type { GatewayConfig, ServiceConfig } from '../../config/types.js'
import { blockSettings, settingsProperties } from '../service-settings.js'
import { derivedOnce } from '../../runtime/derived-once.js'

/** `services.content` settings beside prefix, envelope, policies and routes: one declaration, schema and type. */
export const ContentSettingsSchema = Type.Object({
  source_dir: Type.String({
    minLength: 1,
    default: './content',
    description: 'Folder of content files (*.yaml, *.yml, *.json; one item or an array of items each), relative to the config file\'s folder.',
  }),
  max_per_page: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Largest per_page a client may ask for.' }),
  default_per_page: Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: 'per_page when the client gives none (capped at max_per_page).' }),
  reload_check_ms: Type.Integer({
    minimum: 0,
    maximum: 3600000,
    default: 1000,
    description: 'How often the folder is checked for changed files (names, sizes, mtimes); changed files are reloaded.',
  }),
})

export type ContentSettings = Static<typeof ContentSettingsSchema>

export const contentSettingsSchema = settingsProperties(ContentSettingsSchema)

/**
 * The content settings of a config (defaults filled by the loader, `source_dir` made absolute against the config
 * file's folder by the loader), with per_page capped. Once per config snapshot: a snapshot never changes, and
 * resolving them per request showed in profiles.
 */
export const contentSettingsOf: (config: GatewayConfig) => ContentSettings = derivedOnce((config) => contentSettingsFrom(config.services.content))

/** The validated settings (defaults filled by the loader) with `source_dir` made absolute and per_page capped. */
export function contentSettingsFrom (service: ServiceConfig | undefined): ContentSettings {
  const raw = blockSettings(service, ContentSettingsSchema)
  if (raw === undefined) throw new Error('services.content is not configured')
  return {
    source_dir: resolve(raw.source_dir),
    max_per_page: raw.max_per_page,
    default_per_page: Math.min(raw.default_per_page, raw.max_per_page),
    reload_check_ms: raw.reload_check_ms,
  }
}
