import { dirname, resolve } from 'node:path'
import type { BackendTlsConfig, GatewayConfig, ServerTlsConfig } from './types.js'

/**
 * Makes the config's relative paths absolute against the folder of the config file, not the working directory,
 * so `lanegate validate /abs/path/gateway.yaml` and `lanegate start --config …` mean the same from anywhere
 *. `server.data_dir` is resolved here; the paths given relative to it (`issuer.key_dir`,
 * `user_token_issuers[].development_key_dir`, `storage.sqlite_file`) follow. A service's `source_dir` setting
 * (content) is resolved the same way, and so are the TLS files: `server.tls`, each lane's `tls` and a service's
 * `upstream.tls` and `upstreams.<group>.tls` (proxy blocks). Runs right after the structural pass, before anything reads a path.
 */
export function resolveConfigPaths (config: GatewayConfig, file: string): void {
  const base = resolve(dirname(file))
  config.server.data_dir = resolve(base, config.server.data_dir)
  for (const settings of Object.values(config.services)) {
    if (typeof settings.source_dir === 'string') settings.source_dir = resolve(base, settings.source_dir)
    const upstream = settings.upstream as { tls?: unknown } | undefined
    if (isObject(upstream) && isObject(upstream.tls)) resolveTlsFiles(upstream.tls as BackendTlsConfig, base)
    // A proxy block's named target groups (`upstreams:`), each with the keys of `upstream`.
    const groups = settings.upstreams as Record<string, { tls?: unknown }> | undefined
    for (const group of isObject(groups) ? Object.values(groups) : []) {
      if (isObject(group) && isObject(group.tls)) resolveTlsFiles(group.tls as BackendTlsConfig, base)
    }
  }
  if (isObject(config.server.tls)) resolveTlsFiles(config.server.tls, base)
  for (const sink of config.access_log?.sinks ?? []) {
    if (sink.path !== undefined) sink.path = resolve(base, sink.path)
  }
  for (const organization of config.organizations) {
    for (const store of organization.stores ?? []) {
      if (isObject(store.lane?.tls)) resolveTlsFiles(store.lane.tls, base)
      if (isObject(store.lane?.next?.tls)) resolveTlsFiles(store.lane.next.tls, base)
    }
  }
}

const TLS_FILE_KEYS = ['cert_file', 'key_file', 'ca_file', 'client_ca_file'] as const

function resolveTlsFiles (tls: ServerTlsConfig | BackendTlsConfig, base: string): void {
  const files = tls as Record<string, unknown>
  for (const key of TLS_FILE_KEYS) {
    if (typeof files[key] === 'string') files[key] = resolve(base, files[key])
  }
}

function isObject (value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
