import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'

/**
 * The api-key gateway of api-key-config.ts (keys or, with bearer: true, demo-content's token) with `read_price`
 * ending in `cache` (by `by`, `ttl` seconds, vary X-Lang): scope runs before it. `writes`: also `write_price`
 * (PUT/POST/DELETE on the same path, no cache) and `note` (GET and PUT, cached).
 */
export function cacheYaml (hashes: ApiKeyHashes, backend: string, options: { dataDir?: string, by?: string, ttl?: number, maxBytes?: number, writes?: boolean } = {}): string {
  const cache = `{ cache: { ttl_seconds: ${options.ttl ?? 60}, by: ${options.by ?? 'client'}, vary: [X-Lang] } }`
  // writes: a write route beside the cached one (no cache of its own), and a route that caches and takes writes.
  const writes = options.writes === true
    ? `\n      write_price: { methods: [PUT, POST, DELETE], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } } ] }` +
      `\n      note: { methods: [GET, PUT], path: "/notes/:id", policies: [ { scope: { all: [pricing:read] } }, ${cache} ] }`
    : ''
  return apiKeyConfig({ hashes, backend, dataDir: options.dataDir, apiKey: '{ bearer: true }' })
    .replace('read_price: { methods: [GET, HEAD], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } } ] }',
      `read_price: { methods: [GET, HEAD], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } }, ${cache} ] }${writes}`)
    .replace('issuer: { issuer:', `cache_store: { max_bytes: ${options.maxBytes ?? 1048576} }\nissuer: { issuer:`)
}
