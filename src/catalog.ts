import type { ConfigCatalog } from './config/load-config.js'
import { policyPlugins } from '../plugins/index.js'
import { serviceModules } from './services/registry.js'

/** The policies and services this build of the gateway knows; config validation checks gateway.yaml against it. */
export const catalog: ConfigCatalog = { plugins: policyPlugins, services: serviceModules }
