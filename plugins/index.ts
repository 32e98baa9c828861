import type { PolicyPlugin } from '../src/pipeline/policy.js'
import auth from './auth/index.js'
import organization from './organization/index.js'
import rateLimit from './rate-limit/index.js'
import scope from './scope/index.js'
import tokenType from './token-type/index.js'

/** Every policy plugin by its YAML key (the folder name under plugins/). */
export const policyPlugins: ReadonlyMap<string, PolicyPlugin> = new Map<string, PolicyPlugin>(
  [rateLimit, auth, tokenType, scope, organization].map((plugin) => [plugin.name, plugin]),
)
