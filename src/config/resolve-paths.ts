import { dirname, resolve } from 'node:path'
import type { GatewayConfig } from './types.js'

/**
 * Makes the config's relative paths absolute against the folder of the config file, not the working directory,
 * so `lanegate validate /abs/path/gateway.yaml` and `lanegate start --config …` mean the same from anywhere
 * (issue 15). `server.data_dir` is resolved here; the paths given relative to it (`issuer.key_dir`,
 * `user_token_issuers[].development_key_dir`, `storage.sqlite_file`) follow. A service's `source_dir` setting
 * (content) is resolved the same way. Runs right after the structural pass, before anything reads a path.
 */
export function resolveConfigPaths (config: GatewayConfig, file: string): void {
  const base = resolve(dirname(file))
  config.server.data_dir = resolve(base, config.server.data_dir)
  for (const settings of Object.values(config.services)) {
    if (typeof settings.source_dir === 'string') settings.source_dir = resolve(base, settings.source_dir)
  }
}
