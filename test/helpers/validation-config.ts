import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'

/**
 * The api-key gateway of api-key-config.ts with `read_price` also taking PUT and a `request-validation` step:
 * query currency (eur|usd) and page (integer >= 1), header x-till-id (till-<digits>), body {amount: integer >= 1,
 * note?: string} and nothing else; the block's max_body_bytes is `maxBodyBytes`.
 */
const validation = `request-validation:
              query: { type: object, properties: { currency: { enum: [eur, usd] }, page: { type: integer, minimum: 1 } } }
              headers: { type: object, required: [x-till-id], properties: { x-till-id: { type: string, pattern: "^till-[0-9]+$" } } }
              body: { type: object, required: [amount], additionalProperties: false, properties: { amount: { type: integer, minimum: 1 }, note: { type: string } } }`

export function validationYaml (hashes: ApiKeyHashes, backend: string, maxBodyBytes = 1024, dataDir?: string): string {
  return apiKeyConfig({ hashes, backend, dataDir })
    .replace('read_price: { methods: [GET, HEAD], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } } ] }',
      `read_price:\n        methods: [GET, HEAD, PUT]\n        path: "/prices/:sku"\n        policies:\n          - ${validation}`)
    .replace('    upstream:', `    max_body_bytes: ${maxBodyBytes}\n    upstream:`)
}

