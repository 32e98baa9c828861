import type { Static, TObject } from '@sinclair/typebox'
import type { GatewayConfig, ServiceConfig } from '../config/types.js'

/** A service block read back as its declared settings (beside prefix, envelope, policies and routes). */
export type SettingsOf<S extends TObject> = Static<S> & ServiceConfig

/**
 * The settings of `services.<name>` in a validated config, typed by the TypeBox schema the service declared them
 * with, or undefined when the block is absent. The loader has checked the block against that same schema and filled
 * its defaults, so nothing is checked again here: one declaration gives the schema, the type and this reader.
 */
export function serviceSettings<S extends TObject> (config: GatewayConfig, name: string, schema: S): SettingsOf<S> | undefined {
  return blockSettings(config.services[name], schema)
}

/** `serviceSettings` for a block in hand (a service type's block, or the block a route list is built from). */
export function blockSettings<S extends TObject> (block: ServiceConfig, schema: S): SettingsOf<S>
export function blockSettings<S extends TObject> (block: ServiceConfig | undefined, schema: S): SettingsOf<S> | undefined
export function blockSettings<S extends TObject> (block: ServiceConfig | undefined, _schema: S): SettingsOf<S> | undefined {
  return block as SettingsOf<S> | undefined
}

/**
 * The `routes:` of a block whose entries have a shape of the service's own (its `routeEntrySchema`, `schema` here),
 * typed by it: the loader has checked every entry against that schema and filled its defaults.
 */
export function blockRoutes<S extends TObject> (block: ServiceConfig, _schema: S): Readonly<Record<string, Static<S>>> {
  return block.routes as Record<string, Static<S>>
}

/** `serviceSettings` for a service that is configured whenever its handlers run. */
export function requiredServiceSettings<S extends TObject> (config: GatewayConfig, name: string, schema: S): SettingsOf<S> {
  const settings = serviceSettings(config, name, schema)
  if (settings === undefined) throw new Error(`services.${name} is not configured`)
  return settings
}

/** The JSON Schema properties of a settings declaration, as a service module's `settingsSchema`. */
export function settingsProperties (schema: TObject): Record<string, Record<string, unknown>> {
  return schema.properties
}
