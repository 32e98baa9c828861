import { isDeepStrictEqual } from 'node:util'
import type { GatewayConfig } from './types.js'

/** A change a reload applied everywhere else but that only a restart puts into effect. */
export interface RestartRequiredChange {
  /** The YAML path that changed, down to the setting (`server.keep_alive_timeout_ms`, `services.pricing.prefix`). */
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
 * these need a restart. Each setting is named by its own path, and reported when this reload changes it to a
 * value other than the one the process started with: a setting put back to its start value is what runs, so it
 * is not reported, and one changed earlier is not reported again by a reload that leaves it. What a service
 * block's change needs (its prefix and routes are mounted at start) is `serviceRestartChanges`
 * (src/services/mounted-routes.ts).
 */
export function restartRequiredChanges (started: GatewayConfig, before: GatewayConfig, after: GatewayConfig): RestartRequiredChange[] {
  const changed: RestartRequiredChange[] = []
  for (const [key, read, message] of READ_AT_START) {
    for (const path of differingPaths(key, read(before), read(after))) {
      if (!isDeepStrictEqual(valueAt(read(started), path, key), valueAt(read(after), path, key))) changed.push({ key: path, message })
    }
  }
  return changed
}

/** The paths (under `key`) of the settings that differ; objects are compared key by key, anything else whole. */
function differingPaths (key: string, a: unknown, b: unknown): string[] {
  if (isDeepStrictEqual(a, b)) return []
  if (!isPlainObject(a) || !isPlainObject(b)) return [key]
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])]
  return names.flatMap((name) => differingPaths(`${key}.${name}`, a[name], b[name]))
}

/** The value at `path` (a path `differingPaths` gave under `key`), or undefined where the object has none. */
function valueAt (value: unknown, path: string, key: string): unknown {
  let at = value
  for (const name of path.slice(key.length).split('.').slice(1)) at = isPlainObject(at) ? at[name] : undefined
  return at
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
