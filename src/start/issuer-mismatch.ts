import type { FastifyBaseLogger } from 'fastify'
import type { Gateway } from '../reload/live-config.js'
import type { IssuerConfig } from '../config/types.js'

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]'])

/** What the process listens on: where `issuer.issuer` should point when it names this host. */
export interface Listening {
  host: string
  port: number
  /** `server.tls` on: the port speaks HTTPS only. */
  tls: boolean
}

/**
 * A warning when `issuer.issuer` names this process but on another port than the one it listens on (typically
 * `lanegate start --port N` with an issuer of `http://localhost:8080`), or with the other scheme (`http://` on a
 * listener that speaks only HTTPS, as the demo's default is once `server.tls` is on): discovery metadata and the
 * `iss` of issued tokens then point clients at the wrong place, and `lanegate loadtest` without `--url` calls a
 * URL that does not answer. An issuer on another host name is taken to be a proxy or load balancer in front of
 * the gateway, which legitimately differs, so it is not reported. A warning, not an error: only the operator
 * knows what fronts the gateway.
 */
export function issuerMismatch (issuer: string, listenHost: string, listenPort: number, tls = false): string | undefined {
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    return undefined
  }
  const host = url.hostname
  if (!LOCAL_HOSTS.has(host) && host !== listenHost) return undefined
  const https = url.protocol === 'https:'
  const port = url.port === '' ? (https ? 443 : 80) : Number(url.port)
  const problems: string[] = []
  if (port !== listenPort) problems.push(`names port ${port} but the gateway listens on ${listenPort}`)
  if (https !== tls) problems.push(`is ${https ? 'https' : 'http'} but the gateway's listener speaks ${tls ? 'HTTPS only (server.tls)' : 'plain HTTP (no server.tls)'}`)
  if (problems.length === 0) return undefined
  return `issuer.issuer (${issuer}) ${problems.join(', and ')}: discovery metadata and token iss advertise the configured issuer; set issuer.issuer to the address clients use`
}

/**
 * Warns at start, and on each reload that changes `issuer`, when the issuer names this process on the wrong port
 * or scheme (`issuer.behind_proxy: true` says it is a proxy's address: never warned about).
 */
export function warnIssuerMismatch (gateway: Gateway, logger: FastifyBaseLogger, listening: Listening): void {
  let previous: IssuerConfig | undefined
  const check = (issuer: IssuerConfig): void => {
    if (previous !== undefined && previous.issuer === issuer.issuer && previous.behind_proxy === issuer.behind_proxy) return
    previous = issuer
    const mismatch = issuer.behind_proxy === true ? undefined : issuerMismatch(issuer.issuer, listening.host, listening.port, listening.tls)
    if (mismatch !== undefined) logger.warn({ issuer: issuer.issuer, listening_port: listening.port, listening_tls: listening.tls }, mismatch)
  }
  check(gateway.current().config.issuer)
  gateway.onSwap((snapshot) => check(snapshot.config.issuer))
}
