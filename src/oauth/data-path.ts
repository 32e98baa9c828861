import { resolve } from 'node:path'
import type { GatewayConfig } from '../config/types.js'

/**
 * Resolves a path that gateway.yaml gives relative to `server.data_dir` (made absolute against the config
 * file's folder when the config was loaded, src/config/resolve-paths.ts). Absolute paths are kept as they are.
 */
export function resolveDataPath (config: GatewayConfig, relative: string): string {
  return resolve(process.cwd(), config.server.data_dir, relative)
}
