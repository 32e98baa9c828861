import { loadConfigFile, parseConfigText, type LoadedConfig, type ParseOptions } from '../load-config.js'
import { configRules } from './config-rules.js'
import { catalog as builtIn, type Catalog } from '../../pipeline/registry.js'

/** A validated, frozen config and the catalog (built-in and outside policies, services) it was checked against. */
export type LoadedGatewayConfig = LoadedConfig<Catalog>

/** Loads gateway.yaml with every rule of this build: built-in policies, `plugins:`, services. */
export async function loadGatewayConfig (file: string, options: ParseOptions<Catalog> = {}, base: Catalog = builtIn): Promise<LoadedGatewayConfig> {
  return loadConfigFile(file, configRules(base), options)
}

/** The same for config text (tests, `bootGateway({text})`); `file` names it in problems and anchors `plugins:` paths. */
export async function parseGatewayConfig (text: string, file: string, options: ParseOptions<Catalog> = {}, base: Catalog = builtIn): Promise<LoadedGatewayConfig> {
  return parseConfigText(text, file, configRules(base), options)
}
