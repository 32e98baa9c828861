/**
 * How much CPU a flood of wrong API keys can take (issue 25): `node dist/bench/api-key-flood.js [keys] [declared]`.
 * Builds the gateway's API key verifier over `declared` keys hashed as `lanegate hash-secret` hashes them (scrypt
 * ln=15), verifies one real key (so it is cached), then fires `keys` distinct wrong keys at once and reports how
 * many were answered busy at once, how long the rest took, the process CPU used, and what a cached key cost while
 * the flood ran. Prints one JSON line.
 */
import { performance } from 'node:perf_hooks'
import { createApiKeyVerifier } from '../src/auth/api-key-verifier.js'
import { buildIndexes } from '../src/config/indexes.js'
import { hashSecret } from '../src/secrets/secret-hash.js'
import { parseGatewayConfig } from '../src/config/second-pass/load-gateway-config.js'

const flood = Number(process.argv[2] ?? 500)
const declared = Number(process.argv[3] ?? 1)
const realKey = 'real-key-0123456789abcdefghijklmnopqrstuvw'
const hashes = [await hashSecret(realKey), ...await Promise.all(Array.from({ length: declared - 1 }, (_, i) => hashSecret(`other-${i}`)))]
const yaml = `
issuer: { issuer: http://localhost:8080 }
scopes: { a:read: { description: A } }
organizations: [ { id: org_a } ]
service_accounts:
  - client_id: till
    organization: org_a
    scopes: [a:read]
    secrets: [ { created: "2026-11-25", hash: "${hashes[0]}" } ]
    api_keys:
${hashes.map((h) => `      - { created: "2026-11-25", hash: "${h}" }`).join('\n')}
`
const { config } = await parseGatewayConfig(yaml, 'flood.yaml', { env: {} })
const indexes = buildIndexes(config)
const keys = createApiKeyVerifier()

const oneStart = performance.now()
await keys.verify(realKey, config, indexes)
const firstSightMs = performance.now() - oneStart

const cpuStart = process.cpuUsage()
const wallStart = performance.now()
const answers = Array.from({ length: flood }, (_, i) => keys.verify(`wrong-${i}-${Math.random()}`, config, indexes))
const busy = answers.filter((a) => a === 'busy').length
// A cached key during the flood: one digest and map lookups, whatever the flood does.
const hitStart = performance.now()
for (let i = 0; i < 1000; i++) keys.verify(realKey, config, indexes)
const cachedHitUs = (performance.now() - hitStart)
await Promise.all(answers)
const wallMs = performance.now() - wallStart
const cpu = process.cpuUsage(cpuStart)
console.log(JSON.stringify({
  flood,
  declared_keys: declared,
  first_sight_ms: Math.round(firstSightMs),
  busy_at_once: busy,
  checked: flood - busy,
  flood_wall_ms: Math.round(wallMs),
  flood_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
  cpu_cores_used: Number(((cpu.user + cpu.system) / 1000 / wallMs).toFixed(2)),
  cached_hit_us: Number((cachedHitUs / 1000 * 1000).toFixed(2)),
}))
