import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'

/**
 * The api-key gateway of api-key-config.ts (keys or, with bearer: true, demo-content's token) with `read_price`
 * ending in `cache` (by `by`, `ttl` seconds, vary X-Lang): scope runs before it.
 */
export function cacheYaml (hashes: ApiKeyHashes, backend: string, options: { dataDir?: string, by?: string, ttl?: number, maxBytes?: number } = {}): string {
  return apiKeyConfig({ hashes, backend, dataDir: options.dataDir, apiKey: '{ bearer: true }' })
    .replace('read_price: { methods: [GET, HEAD], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } } ] }',
      `read_price: { methods: [GET, HEAD], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } }, { cache: { ttl_seconds: ${options.ttl ?? 60}, by: ${options.by ?? 'client'}, vary: [X-Lang] } } ] }`)
    .replace('issuer: { issuer:', `cache_store: { max_bytes: ${options.maxBytes ?? 1048576} }\nissuer: { issuer:`)
}
