import { formatPath, type ConfigProblem } from './config-error.js'
import { loadCertificatePair, readCaBundle, TlsFileError, type CertificatePair, type FileStamp, type ListenerFiles } from './tls-files.js'
import type { BackendTlsConfig, GatewayConfig, ServerTlsConfig } from './types.js'

const DAY_MS = 86_400_000
/** A certificate that ends within this is warned about (`lanegate validate`, and the log at start and reload). */
export const EXPIRY_WARNING_DAYS = 14

type Segments = (string | number)[]
/** semantic-checks.ts's LocatedProblem and ConfigWarning, restated: it imports this file (no cycle, type-only included). */
interface LocatedProblem { problem: ConfigProblem, segments: Segments }
interface ConfigWarning { path: string, line?: number, message: string }

/**
 * The TLS files a config names, read and checked the way the listener and the upstream engine will use them:
 * a file missing or not parsable, a key that does not match its certificate, and an expired certificate are
 * problems (at the setting's YAML path); a certificate ending within 14 days, `verify: false` on a backend, and
 * `server.http2` without `server.tls` (an error) are reported here too. Paths are already absolute (resolve-paths.ts).
 * The listener's files, when they load, are returned as read (`listener`): the start hands them on to the
 * listener and its rotation rather than reading them again.
 */
export function checkTlsSettings (config: GatewayConfig, now: number): { problems: LocatedProblem[], warnings: ConfigWarning[], listener?: ListenerFiles } {
  const problems: LocatedProblem[] = []
  const warnings: ConfigWarning[] = []
  const report = (segments: Segments, message: string): void => {
    problems.push({ problem: { path: formatPath(segments), message }, segments })
  }
  const warn = (segments: Segments, message: string): void => { warnings.push({ path: formatPath(segments), message }) }

  const server = config.server
  if (server.http2 === true && server.tls === undefined) report(['server', 'http2'], 'needs server.tls: HTTP/2 is offered by ALPN on the TLS listener')
  const listener = server.tls === undefined ? undefined : checkServerTls(server.tls, ['server', 'tls'])

  for (const [name, settings] of Object.entries(config.services)) {
    const tls = (settings.upstream as { tls?: BackendTlsConfig } | undefined)?.tls
    if (tls !== undefined && typeof tls === 'object') checkBackendTls(tls, ['services', name, 'upstream', 'tls'])
    const groups = settings.upstreams as Record<string, { tls?: BackendTlsConfig }> | undefined
    for (const [group, upstream] of Object.entries(groups ?? {})) {
      if (typeof upstream?.tls === 'object') checkBackendTls(upstream.tls, ['services', name, 'upstreams', group, 'tls'])
    }
  }
  config.organizations.forEach((organization, i) => {
    organization.stores?.forEach((store, j) => {
      if (store.lane?.tls !== undefined) checkBackendTls(store.lane.tls, ['organizations', i, 'stores', j, 'lane', 'tls'])
      if (store.lane?.next?.tls !== undefined) checkBackendTls(store.lane.next.tls, ['organizations', i, 'stores', j, 'lane', 'next', 'tls'])
    })
  })
  return { problems, warnings, listener }

  function checkServerTls (tls: ServerTlsConfig, at: Segments): ListenerFiles | undefined {
    const stamps: FileStamp[] = []
    const pair = checkPair(tls.cert_file, tls.key_file, at, stamps)
    const clientCa = tls.client_ca_file === undefined ? undefined : checkCa(tls.client_ca_file, [...at, 'client_ca_file'], stamps)
    if (pair === undefined || (tls.client_ca_file !== undefined && clientCa === undefined)) return undefined
    return { pair, clientCa, stamps }
  }

  function checkBackendTls (tls: BackendTlsConfig, at: Segments): void {
    if ((tls.cert_file === undefined) !== (tls.key_file === undefined)) {
      report([...at, tls.cert_file === undefined ? 'key_file' : 'cert_file'], 'cert_file and key_file go together (a client certificate needs its key)')
    } else if (tls.cert_file !== undefined && tls.key_file !== undefined) {
      checkPair(tls.cert_file, tls.key_file, at)
    }
    if (tls.ca_file !== undefined) checkCa(tls.ca_file, [...at, 'ca_file'])
    if (tls.only_ca === true && tls.ca_file === undefined) report([...at, 'only_ca'], 'needs ca_file (only_ca trusts nothing else)')
    if (tls.verify === false) warn([...at, 'verify'], 'the backend\'s certificate is not verified: anyone on the path can impersonate it')
  }

  function checkPair (certFile: string, keyFile: string, at: Segments, stamps?: FileStamp[]): CertificatePair | undefined {
    try {
      const pair = loadCertificatePair(certFile, keyFile, stamps)
      const left = pair.notAfter.getTime() - now
      if (left <= 0) report([...at, 'cert_file'], `${certFile}: the certificate expired on ${pair.notAfter.toISOString()}`)
      else if (left < EXPIRY_WARNING_DAYS * DAY_MS) warn([...at, 'cert_file'], `${certFile}: the certificate expires on ${pair.notAfter.toISOString()} (within ${EXPIRY_WARNING_DAYS} days): renew it`)
      return pair
    } catch (error) {
      if (!(error instanceof TlsFileError)) throw error
      report([...at, error.field], error.message)
      return undefined
    }
  }

  function checkCa (file: string, at: Segments, stamps?: FileStamp[]): Buffer | undefined {
    try {
      return readCaBundle(file, 'ca_file', stamps)
    } catch (error) {
      if (!(error instanceof TlsFileError)) throw error
      report(at, error.message)
      return undefined
    }
  }
}
