import { apiKeyConfig, type ApiKeyHashes } from './api-key-config.js'

/**
 * The api-key gateway of api-key-config.ts (`pricing` proxy block in front of `backend`, prefix /legacy/pricing,
 * exchange envelope) with its routes replaced by `routes`: YAML lines indented for `routes:` (six spaces).
 * `maxBodyBytes` is the block's own max_body_bytes.
 */
export function transformYaml (hashes: ApiKeyHashes, backend: string, routes: string, maxBodyBytes = 1048576): string {
  const yaml = apiKeyConfig({ hashes, backend })
  const start = yaml.indexOf('      read_price:')
  const end = yaml.indexOf('\n', start)
  return (yaml.slice(0, start) + routes.replace(/\n+$/, '') + yaml.slice(end))
    .replace('    upstream:', `    max_body_bytes: ${maxBodyBytes}\n    upstream:`)
}
