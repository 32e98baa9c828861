import type { SecureContextOptions } from 'node:tls'
import { loadCertificatePair, readCaBundle, type CertificatePair } from '../config/tls-files.js'
import type { ServerConfig, ServerTlsConfig } from '../config/types.js'

/** The listener's TLS material, loaded from `server.tls`'s files. */
export interface ListenerTls {
  /** What `tls.createSecureContext` (and `server.setSecureContext` on rotation) takes. */
  readonly context: SecureContextOptions
  readonly pair: CertificatePair
}

/** Reads and checks the listener's pair (and the callers' CA); throws `TlsFileError` when one does not load. */
export function loadListenerTls (tls: ServerTlsConfig): ListenerTls {
  const pair = loadCertificatePair(tls.cert_file, tls.key_file)
  const ca = tls.client_ca_file === undefined ? undefined : readCaBundle(tls.client_ca_file, 'client_ca_file')
  return { pair, context: { cert: pair.cert, key: pair.key, ca, minVersion: tls.min_version } }
}

/** The node:http options fastify's server is created with (limits and timeouts), whatever the transport. */
export interface HttpLimits {
  maxHeaderSize: number
  headersTimeout: number
  connectionsCheckingInterval: number
}

/**
 * fastify's transport options for `server`: plain HTTP (`http`), HTTPS (`https`: node's https server takes the
 * same limits), or HTTPS with HTTP/2 (`http2` + `https` with `allowHTTP1`: ALPN picks h2 or http/1.1). With
 * `client_ca_file` callers are asked for a certificate but a handshake without one, or with one the CA did not
 * sign, still completes: the `client-certificate` policy answers 401/403 in the route's envelope, and routes that
 * do not ask for one stay open to every caller.
 */
export function listenerTransport (server: ServerConfig, limits: HttpLimits): Record<string, unknown> {
  if (server.tls === undefined) return { http: limits }
  const { context } = loadListenerTls(server.tls)
  const https = { ...limits, ...context, requestCert: context.ca !== undefined, rejectUnauthorized: false }
  if (server.http2 !== true) return { https }
  return {
    http2: true,
    https: { ...https, allowHTTP1: true, settings: { maxHeaderListSize: limits.maxHeaderSize } },
  }
}
