import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'
import { GatewayFixture } from './gateway-fixture.js'

/**
 * The api-key gateway of api-key-config.ts (keys or, with bearer: true, demo-content's token) with `read_price`
 * ending in `cache` (by `by`, `ttl` seconds, vary X-Lang): scope runs before it. `writes`: also `write_price`
 * (PUT/POST/DELETE on the same path, no cache) and `note` (GET and PUT, cached).
 */
export function cacheYaml (hashes: ApiKeyHashes, backend: string, options: { dataDir?: string, by?: string, ttl?: number, maxBytes?: number, writes?: boolean } = {}): string {
  const cache = { cache: { ttl_seconds: options.ttl ?? 60, by: options.by ?? 'client', vary: ['X-Lang'] } }
  let fixture = GatewayFixture.parse(apiKeyConfig({ hashes, backend, dataDir: options.dataDir, apiKey: '{ bearer: true }' }))
    .append('services.pricing.routes.read_price.policies', cache)
    .set('cache_store', { max_bytes: options.maxBytes ?? 1048576 })
  // writes: a write route beside the cached one (no cache of its own), and a route that caches and takes writes.
  if (options.writes === true) {
    const scope = { scope: { all: ['pricing:read'] } }
    fixture = fixture
      .set('services.pricing.routes.write_price', { methods: ['PUT', 'POST', 'DELETE'], path: '/prices/:sku', policies: [scope] })
      .set('services.pricing.routes.note', { methods: ['GET', 'PUT'], path: '/notes/:id', policies: [scope, cache] })
  }
  return fixture.text()
}
