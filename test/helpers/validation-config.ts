import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'
import { GatewayFixture } from './gateway-fixture.js'

/** The `request-validation` step of `read_price`, at `services.pricing.routes.read_price.policies.0`. */
const validation = {
  'request-validation': {
    query: { type: 'object', properties: { currency: { enum: ['eur', 'usd'] }, page: { type: 'integer', minimum: 1 } } },
    headers: { type: 'object', required: ['x-till-id'], properties: { 'x-till-id': { type: 'string', pattern: '^till-[0-9]+$' } } },
    body: { type: 'object', required: ['amount'], additionalProperties: false, properties: { amount: { type: 'integer', minimum: 1 }, note: { type: 'string' } } },
  },
}

/** Where the body schema's `amount` property sits in the validation config (for edits that break it). */
export const VALIDATION_AMOUNT = 'services.pricing.routes.read_price.policies.0.request-validation.body.properties.amount'

/**
 * The api-key gateway of api-key-config.ts with `read_price` also taking PUT and a `request-validation` step:
 * query currency (eur|usd) and page (integer >= 1), header x-till-id (till-<digits>), body {amount: integer >= 1,
 * note?: string} and nothing else; the block's max_body_bytes is `maxBodyBytes`.
 */
export function validationFixture (hashes: ApiKeyHashes, backend: string, maxBodyBytes = 1024, dataDir?: string): GatewayFixture {
  return GatewayFixture.parse(apiKeyConfig({ hashes, backend, dataDir }))
    .set('services.pricing.routes.read_price', { methods: ['GET', 'HEAD', 'PUT'], path: '/prices/:sku', policies: [validation] })
    .set('services.pricing.max_body_bytes', maxBodyBytes)
}

/** `validationFixture` as YAML text. */
export function validationYaml (hashes: ApiKeyHashes, backend: string, maxBodyBytes = 1024, dataDir?: string): string {
  return validationFixture(hashes, backend, maxBodyBytes, dataDir).text()
}
