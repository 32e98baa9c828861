import type { SecureContextOptions } from 'node:tls'
import { loadListenerFiles, type CertificatePair, type FileStamp, type ListenerFiles } from '../config/tls-files.js'
import type { ServerConfig, ServerTlsConfig } from '../config/types.js'

/** The listener's TLS material, loaded from `server.tls`'s files. */
export interface ListenerTls {
  /** What `tls.createSecureContext` (and `server.setSecureContext` on rotation) takes. */
  readonly context: SecureContextOptions
  readonly pair: CertificatePair
  /** The files as they were read (rotation-watching compares with them). */
  readonly stamps: readonly FileStamp[]
}

/** The listener's material from its files as read (by validation at start, or by {@link loadListenerTls}). */
export function listenerTlsFrom (tls: ServerTlsConfig, files: ListenerFiles): ListenerTls {
  const { pair, clientCa, stamps } = files
  return { pair, stamps, context: { cert: pair.cert, key: pair.key, ca: clientCa, minVersion: tls.min_version } }
}

/** Reads and checks the listener's pair (and the callers' CA); throws `TlsFileError` when one does not load. */
export function loadListenerTls (tls: ServerTlsConfig): ListenerTls {
  return listenerTlsFrom(tls, loadListenerFiles(tls))
}

/**
 * The listener's material for `tls`: the files validation read (`read`, from the loaded config) when they are
 * `tls`'s own, else read now. Validation already read and checked them: reading them again at start only cost
 * time (the rotation still learns of a change made since, by the files' stamps).
 */
export function startingListenerTls (tls: ServerTlsConfig, read: ListenerFiles | undefined): ListenerTls {
  const own = [tls.cert_file, tls.key_file, ...(tls.client_ca_file === undefined ? [] : [tls.client_ca_file])]
  const same = read !== undefined && read.stamps.length === own.length && read.stamps.every((stamp, i) => stamp.file === own[i])
  return same ? listenerTlsFrom(tls, read) : loadListenerTls(tls)
}

/** The node:http options fastify's server is created with (limits and timeouts), whatever the transport. */
export interface HttpLimits {
  maxHeaderSize: number
  headersTimeout: number
  connectionsCheckingInterval: number
}

/**
 * fastify's transport options for `server`: plain HTTP (`http`), HTTPS (`https`: node's https server takes the
 * same limits; `listenerTls` is the material already read, else the files are read), or HTTPS with HTTP/2
 * (`http2` + `https` with `allowHTTP1`: ALPN picks h2 or http/1.1). With
 * `client_ca_file` callers are asked for a certificate but a handshake without one, or with one the CA did not
 * sign, still completes: the `client-certificate` policy answers 401/403 in the route's envelope, and routes that
 * do not ask for one stay open to every caller.
 */
export function listenerTransport (server: ServerConfig, limits: HttpLimits, listenerTls: ListenerTls | undefined): Record<string, unknown> {
  if (server.tls === undefined) return { http: limits }
  const { context } = listenerTls ?? loadListenerTls(server.tls)
  const https = { ...limits, ...context, requestCert: context.ca !== undefined, rejectUnauthorized: false }
  if (server.http2 !== true) return { https }
  return {
    http2: true,
    https: { ...https, allowHTTP1: true, settings: { maxHeaderListSize: limits.maxHeaderSize } },
  }
}
