const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]'])

/**
 * A warning when `issuer.issuer` names this process but on another port than the one it listens on (typically
 * `lanegate start --port N` with an issuer of `http://localhost:8080`): discovery metadata and the `iss` of issued
 * tokens then point clients at the wrong place. An issuer on another host name is taken to be a proxy or load
 * balancer in front of the gateway, which legitimately differs, so it is not reported. A warning, not an error:
 * only the operator knows what fronts the gateway.
 */
export function issuerMismatch (issuer: string, listenHost: string, listenPort: number): string | undefined {
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    return undefined
  }
  const host = url.hostname
  if (!LOCAL_HOSTS.has(host) && host !== listenHost) return undefined
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
  if (port === listenPort) return undefined
  return `issuer.issuer (${issuer}) names port ${port} but the gateway listens on ${listenPort}: discovery metadata and token iss advertise the configured issuer; set issuer.issuer to the address clients use`
}
