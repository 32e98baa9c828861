import type { PolicyContext } from '../src/plugin/index.js'

/** A relaying service's own body limit (`max_body_bytes` of a proxy block or of the live service), if it has one. */
export function relayBodyLimit (context: PolicyContext): number | undefined {
  const block = context.config.services[context.service] as unknown as { max_body_bytes?: unknown } | undefined
  return typeof block?.max_body_bytes === 'number' ? block.max_body_bytes : undefined
}
