import type { PolicyPlugin } from '../plugin/policy.js'
import type { ServiceModule } from '../services/service-module.js'
import { serviceModules } from '../services/registry.js'
import auth from '../../plugins/auth/index.js'
import clientCertificate from '../../plugins/client-certificate/index.js'
import cors from '../../plugins/cors/index.js'
import headers from '../../plugins/headers/index.js'
import ipRestriction from '../../plugins/ip-restriction/index.js'
import organization from '../../plugins/organization/index.js'
import rateLimit from '../../plugins/rate-limit/index.js'
import scope from '../../plugins/scope/index.js'
import tokenType from '../../plugins/token-type/index.js'
import connectionLimit from '../../plugins/connection-limit/index.js'
import apiKey from '../../plugins/api-key/index.js'
import requestValidation from '../../plugins/request-validation/index.js'
import transform from '../../plugins/transform/index.js'
import cache from '../../plugins/cache/index.js'
import externalAuth from '../../plugins/external-auth/index.js'

/**
 * The policies and services a running gateway knows: the built-in ones, plus the outside policies gateway.yaml's
 * `plugins:` loaded at start. Config validation checks gateway.yaml against it; snapshots are built from it.
 */
export interface Catalog {
  readonly plugins: ReadonlyMap<string, PolicyPlugin>
  readonly services: readonly ServiceModule[]
  /** Which entry of `plugins:` each outside policy came from (policy name → module reference). */
  readonly outside: ReadonlyMap<string, string>
  /** Where each outside policy was loaded from, for the start-up log (policy name → file and version). */
  readonly origins?: ReadonlyMap<string, PluginOrigin>
}

/** The file an outside policy was imported from and its version (the plugin's `version`, or its package's). */
export interface PluginOrigin {
  readonly reference: string
  readonly file: string
  readonly version: string | undefined
}

/** The policies bundled with lanegate (folders under `plugins/`), all on the public contract of `lanegate/plugin`. */
export const builtInPolicies: readonly PolicyPlugin[] = [rateLimit, auth, apiKey, tokenType, scope, organization, cors, ipRestriction, headers, clientCertificate, connectionLimit, requestValidation, cache, externalAuth, transform]

/** Every built-in policy by its YAML key (the folder name under plugins/). */
export const policyPlugins: ReadonlyMap<string, PolicyPlugin> = new Map(builtInPolicies.map((plugin) => [plugin.name, plugin]))

/** The built-in catalog (before `plugins:` adds outside policies). */
export const catalog: Catalog = { plugins: policyPlugins, services: serviceModules, outside: new Map() }
