import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/** A certificate and key for 127.0.0.1, made at run time (never committed). */
export interface BenchCertificate { certFile: string, keyFile: string }

/**
 * A self-signed EC P-256 certificate for `127.0.0.1`/`localhost` under `dir/tls`, made with `openssl`: the
 * lanegate and nginx TLS variants of the `tls` scenario serve the same one, so their handshakes cost the same
 * key operations. The load generator does not verify it (autocannon never does).
 */
export function benchCertificate (dir: string): BenchCertificate {
  const tlsDir = join(dir, 'tls')
  mkdirSync(tlsDir, { recursive: true })
  const certFile = join(tlsDir, 'bench.crt')
  const keyFile = join(tlsDir, 'bench.key')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-subj', '/CN=localhost', '-days', '2', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] })
  return { certFile, keyFile }
}
