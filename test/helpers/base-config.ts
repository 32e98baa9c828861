import { stringify } from 'yaml'
import { configSections } from '../../src/config/schema.js'
import { compileSchema } from '../../src/plugin/validators.js'
import type { GatewayConfig } from '../../src/config/types.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { catalog } from '../../src/pipeline/registry.js'
import type { ServiceModule } from '../../src/services/service-module.js'

const validateSections = compileSchema(configSections, 'lanegate')

/**
 * A complete GatewayConfig with every key at its schema default (src/config/schema.ts fills them, as it does for a
 * gateway.yaml), no organizations, accounts or services. Given here: only what a test gateway sets on purpose
 * (loopback, port 0, no logs, a short shutdown grace, an issuer). Tests that build one service or policy in a bare
 * app start here and override what they need.
 */
export function baseTestConfig (overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  const sections: Record<string, unknown> = {
    server: { host: '127.0.0.1', port: 0, log_level: 'silent', shutdown_grace_ms: 1000 },
    issuer: { issuer: 'https://auth.test' },
    scopes: {},
  }
  if (!validateSections(sections)) throw new Error(`base test config: ${JSON.stringify(validateSections.errors)}`)
  return { ...sections as unknown as GatewayConfig, services: {}, ...overrides }
}

/**
 * `config` as the gateway would run it: written out as YAML and read back through the real loader, so every
 * default (policy options, service settings) is filled by the loader alone and the result is frozen. `services`
 * are the service modules whose blocks it may hold. Their whole-config `check`s are left out: bare-service tests
 * also serve states a running gateway can reach but a start would refuse (a content folder broken after start).
 */
export async function loadTestConfig (config: GatewayConfig, services: readonly ServiceModule[]): Promise<GatewayConfig> {
  const unchecked = services.map((service): ServiceModule => ({ ...service, check: undefined }))
  const loaded = await parseGatewayConfig(stringify(config), 'test-config.yaml', { env: {} }, { ...catalog, services: unchecked })
  return loaded.config
}
