import { isDeepStrictEqual } from 'node:util'
import type { GatewayConfig } from './types.js'

/** A change a reload applied everywhere else but that only a restart puts into effect. */
export interface RestartRequiredChange {
  /** The YAML path that changed (`server`, `services.pricing.prefix`, `services.pricing`). */
  key: string
  /** What stays as it was until a restart, in words for the log. */
  message: string
}

/** The settings read only at start, with what a restart changes. */
const READ_AT_START: ReadonlyArray<[string, (config: GatewayConfig) => unknown, string]> = [
  ['plugins', (c) => c.plugins, 'outside policies are imported at start only; the ones loaded then stay until a restart'],
  ['server', (c) => c.server, 'the listener and its limits are set up at start only'],
  ['admin', (c) => c.admin, 'the admin listener is set up at start only'],
  ['storage', (c) => c.storage, 'the storage is opened at start only'],
  ['rate_limit_store', (c) => c.rate_limit_store, 'the rate-limit store is opened at start only'],
  ['issuer.key_dir', (c) => c.issuer.key_dir, 'the signing keys are loaded at start only'],
  ['issuer.algorithm', (c) => c.issuer.algorithm, 'the signing keys are loaded at start only'],
]

/**
 * Settings a reload cannot change in a running process: the listener, the stores, the signing keys' location and
 * the outside policies imported at start (`plugins:`). A reload that changes them still applies everything else;
 * these need a restart. What a service block's change needs (its prefix and routes are mounted at start) is
 * `serviceRestartChanges` (src/services/mounted-routes.ts).
 */
export function restartRequiredChanges (before: GatewayConfig, after: GatewayConfig): RestartRequiredChange[] {
  const changed: RestartRequiredChange[] = []
  for (const [key, read, message] of READ_AT_START) {
    if (!isDeepStrictEqual(read(before), read(after))) changed.push({ key, message })
  }
  return changed
}
