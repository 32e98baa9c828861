/**
 * TLS alerts a backend sent after the handshake, by the local port of the connection. A TLS 1.3 server that
 * wants a client certificate completes the handshake and then sends `certificate required`: node reports that
 * alert on the socket, but undici then fails the request with a plain `other side closed` (UND_ERR_SOCKET) that
 * carries only the socket's addresses. The connector (backend-tls.ts) notes the alert here, so failure.ts can
 * call that failure `tls` rather than `reset`. An entry lives a few seconds after its socket closed.
 */
const alerts = new Map<number, string>()

const TLS_CODE = /^ERR_(SSL|TLS)_|CERT/

/** Called with each error a backend socket emits; keeps the TLS ones. */
export function noteSocketError (localPort: number | undefined, error: Error): void {
  const code = (error as { code?: unknown }).code
  if (localPort === undefined || typeof code !== 'string' || !TLS_CODE.test(code)) return
  alerts.set(localPort, code)
  setTimeout(() => { if (alerts.get(localPort) === code) alerts.delete(localPort) }, 5_000).unref()
}

/** The TLS alert the connection on `localPort` ended with, if any. */
export function tlsAlertOn (localPort: unknown): string | undefined {
  return typeof localPort === 'number' ? alerts.get(localPort) : undefined
}
