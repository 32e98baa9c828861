import { isDeepStrictEqual } from 'node:util'
import type { GatewayConfig } from './types.js'

/**
 * Settings a reload cannot change in a running process: the listener, the stores, the signing keys' location
 * the registered URL space and the outside policies imported at start (`plugins:`). A reload that changes them still applies everything else; these need a restart.
 */
export function restartRequiredChanges (before: GatewayConfig, after: GatewayConfig): string[] {
  const changed: string[] = []
  const compare = (path: string, a: unknown, b: unknown): void => {
    if (!isDeepStrictEqual(a, b)) changed.push(path)
  }
  compare('plugins', before.plugins, after.plugins)
  compare('server', before.server, after.server)
  compare('admin', before.admin, after.admin)
  compare('storage', before.storage, after.storage)
  compare('rate_limit_store', before.rate_limit_store, after.rate_limit_store)
  compare('issuer.key_dir', before.issuer.key_dir, after.issuer.key_dir)
  compare('issuer.algorithm', before.issuer.algorithm, after.issuer.algorithm)
  const services = new Set([...Object.keys(before.services), ...Object.keys(after.services)])
  for (const name of services) {
    compare(`services.${name}.prefix`, before.services[name]?.prefix, after.services[name]?.prefix)
  }
  return changed
}
