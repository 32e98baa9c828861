import type { TLSSocket } from 'node:tls'

/**
 * A caller's certificate that the listener verified against `server.tls.client_ca_file` (mutual TLS): what
 * `context.clientCertificate(request)` gives policies (docs/plugins.md), the `client-certificate` policy included.
 */
export interface ClientCertificate {
  /** The subject's common name (CN), '' when it has none. */
  readonly subject: string
  /** The subject alternative names, as `DNS:name`, `URI:…`, `IP Address:…`, `email:…` (node's spelling). */
  readonly subjectAltNames: readonly string[]
  /** SHA-256 of the DER certificate, lower-case hex without colons. */
  readonly fingerprintSha256: string
  /** Serial number, upper-case hex. */
  readonly serial: string
  /** Not-after time. */
  readonly validTo: Date
}

/** One parse per TLS connection: keep-alive requests (and HTTP/2 streams) on it reuse it. */
const bySocket = new WeakMap<object, ClientCertificate | null>()

/**
 * The verified client certificate of the connection `socket` belongs to (for HTTP/2, the session's socket that
 * node's compatibility API hands out), or undefined: plain HTTP, no certificate sent, or one the CA did not sign
 * (the handshake completes either way; the policy decides).
 */
export function verifiedClientCertificate (socket: unknown): ClientCertificate | undefined {
  const tls = socket as Partial<TLSSocket> | undefined
  if (tls === undefined || typeof tls.getPeerCertificate !== 'function') return undefined
  const key = (tls as { _handle?: object })._handle ?? tls
  const known = bySocket.get(key)
  if (known !== undefined) return known ?? undefined
  let certificate: ClientCertificate | null = null
  if (tls.authorized === true) {
    const peer = tls.getPeerCertificate()
    if (peer !== undefined && peer !== null && Object.keys(peer).length > 0) {
      const cn = peer.subject?.CN
      certificate = {
        subject: typeof cn === 'string' ? cn : Array.isArray(cn) ? String(cn[0] ?? '') : '',
        subjectAltNames: (peer.subjectaltname ?? '').split(', ').filter((name) => name !== ''),
        fingerprintSha256: peer.fingerprint256.replaceAll(':', '').toLowerCase(),
        serial: peer.serialNumber.toUpperCase(),
        validTo: new Date(peer.valid_to),
      }
    }
  }
  bySocket.set(key, certificate)
  return certificate ?? undefined
}
