import type { GatewayConfig } from '../config/types.js'

export const DEFAULT_ADMIN_HOST = '127.0.0.1'
export const DEFAULT_ADMIN_PORT = 9464

/** Where the admin listener listens, or undefined when `admin: false` (no listener, no metrics). */
export function adminSettings (config: GatewayConfig): { host: string, port: number } | undefined {
  if (config.admin === false) return undefined
  return { host: config.admin?.host ?? DEFAULT_ADMIN_HOST, port: config.admin?.port ?? DEFAULT_ADMIN_PORT }
}
