import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'
import { GatewayFixture } from './gateway-fixture.js'

/**
 * The api-key gateway of api-key-config.ts (keys or, with bearer: true, demo-content's token) with `read_price`
 * ending in `cache` (by `by`, `ttl` seconds, vary X-Lang): scope runs before it.
 */
export function cacheYaml (hashes: ApiKeyHashes, backend: string, options: { dataDir?: string, by?: string, ttl?: number, maxBytes?: number } = {}): string {
  return GatewayFixture.parse(apiKeyConfig({ hashes, backend, dataDir: options.dataDir, apiKey: '{ bearer: true }' }))
    .append('services.pricing.routes.read_price.policies', { cache: { ttl_seconds: options.ttl ?? 60, by: options.by ?? 'client', vary: ['X-Lang'] } })
    .set('cache_store', { max_bytes: options.maxBytes ?? 1048576 })
    .text()
}
