import type { GatewayConfig } from './types.js'

/**
 * `issuer.issuer` when the file gives none: this host on the listener's port, `https://` when `server.tls` is set
 * (so a TLS gateway does not advertise an http:// issuer). Runs after `adjust`, so `lanegate start --port 9000`
 * gets `…localhost:9000`. An issuer given in the file is kept as it is (the `--port` mismatch warning still applies).
 */
export function defaultIssuer (config: GatewayConfig): void {
  if (config.issuer.issuer !== undefined) return
  const scheme = config.server.tls === undefined ? 'http' : 'https'
  config.issuer.issuer = `${scheme}://localhost:${config.server.port}`
}
