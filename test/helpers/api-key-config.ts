import { hashSecret } from '../../src/secrets/secret-hash.js'

/** Two keys of `till-legacy` (a pricing reader) and one of `till-other` (no pricing scope); cheap scrypt (ln=10). */
export const KEYS = { till: 'till-key-0123456789abcdefghijklmnopqrstuv', tillOld: 'till-old-key-zyxwvutsrqponmlkjihgfedcba', other: 'other-key-00000000000000000000000000000000' } as const

export interface ApiKeyHashes { till: string, tillOld: string, other: string }

export async function apiKeyHashes (): Promise<ApiKeyHashes> {
  return { till: await hashSecret(KEYS.till, 10), tillOld: await hashSecret(KEYS.tillOld, 10), other: await hashSecret(KEYS.other, 10) }
}

export interface ApiKeyConfigOptions {
  hashes: ApiKeyHashes
  backend: string
  dataDir?: string
  /** `status:` of till-legacy (a reload to `revoked` refuses its keys). */
  tillStatus?: 'active' | 'revoked'
  /** Whether till-legacy still declares its old key. */
  withOldKey?: boolean
  /** Options of the `api-key` step of the pricing block. */
  apiKey?: string
  /** Also a store org_store_001 whose lane is `backend`, and the live service (api-key, scope, organization). */
  live?: boolean
}

/**
 * A gateway with a `pricing` proxy block in front of `backend`: `api-key` then `scope`, so a key must give its
 * account's scopes for the request to pass. `read_price` needs pricing:read (till-legacy has it, till-other not).
 * demo-content's secret is `demo-content-secret` (for a bearer token).
 */
export function apiKeyConfig (options: ApiKeyConfigOptions): string {
  const { hashes } = options
  return `
server: { data_dir: ${options.dataDir ?? './data'}, log_level: debug }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
  engage:content.view: { description: Read content }
  exchange:live.read: { description: Read a store's lane }
organizations:
  - id: org_hq_demo
${options.live === true ? `    stores:\n      - { id: org_store_001, lane: { base_url: "${options.backend}" } }` : ''}
service_accounts:
  - client_id: till-legacy
    organization: org_hq_demo
    scopes: [pricing:read, exchange:live.read]
    status: ${options.tillStatus ?? 'active'}
    secrets:
      - { created: "2026-11-01", hash: "${hashes.till}" }
    api_keys:
      - { created: "2026-11-25", hash: "${hashes.till}" }
${options.withOldKey === false ? '' : `      - { created: "2026-11-01", hash: "${hashes.tillOld}" }`}
  - client_id: till-other
    organization: org_hq_demo
    scopes: [engage:content.view]
    secrets:
      - { created: "2026-11-01", hash: "${hashes.other}" }
    api_keys:
      - { created: "2026-11-25", hash: "${hashes.other}" }
  - client_id: demo-content
    organization: org_hq_demo
    scopes: [pricing:read]
    secrets:
      - { created: "2026-11-01", hash: "$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g" }
services:
  pricing:
    type: proxy
    prefix: /legacy/pricing
    envelope: exchange
    upstream:
      targets: [ "${options.backend}" ]
    policies:
      - api-key: ${options.apiKey ?? '{}'}
    routes:
      read_price: { methods: [GET, HEAD], path: "/prices/:sku", policies: [ { scope: { all: [pricing:read] } } ] }
${options.live === true ? `  live:
    prefix: /v1/stores
    envelope: exchange
    policies:
      - api-key: ${options.apiKey ?? '{}'}
    routes:
      read:
        - scope: { all: [exchange:live.read] }
        - organization: { param: store_org_id, not_found: true }
` : ''}`
}
