import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** One issued certificate: its files (PEM) and what tests compare against. */
export interface Issued {
  cert: string
  key: string
  /** Upper-case hex serial, as X509Certificate.serialNumber gives it. */
  serial: string
  /** SHA-256 fingerprint, lower-case hex without colons. */
  fingerprint: string
}

export interface IssueOptions {
  /** subjectAltName entries, e.g. `DNS:localhost,IP:127.0.0.1`; none by default. */
  sans?: string
  /** Validity in days from now (default 30). */
  days?: number
  /** Valid only in January 2020 (an expired certificate). */
  expired?: boolean
  /** extendedKeyUsage: serverAuth (default), clientAuth or both. */
  usage?: 'server' | 'client'
}

/** A private CA made with `openssl` in a temporary folder, for one test file; `remove()` deletes every key. */
export interface TestPki {
  dir: string
  /** The CA's certificate file (PEM). */
  caCert: string
  issue (name: string, cn: string, options?: IssueOptions): Issued
  /** A self-signed certificate (its own CA), e.g. a backend nobody vouches for. */
  selfSigned (name: string, cn: string, sans?: string): Issued
  remove (): void
}

const CA_CONFIG = `[ ca ]
default_ca = d
[ d ]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = p
copy_extensions = copy
unique_subject = no
[ p ]
commonName = supplied
`

function openssl (dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
}

function describe (dir: string, name: string): Issued {
  const cert = join(dir, `${name}.crt`)
  const x509 = new X509Certificate(readFileSync(cert))
  return { cert, key: join(dir, `${name}.key`), serial: x509.serialNumber.toUpperCase(), fingerprint: x509.fingerprint256.replaceAll(':', '').toLowerCase() }
}

/** Makes a CA (`name`, EC P-256) under a new temporary folder. Keys never leave it. */
export function createTestPki (caName = 'Test CA'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-pki-'))
  writeFileSync(join(dir, 'ca.cnf'), CA_CONFIG)
  writeFileSync(join(dir, 'index.txt'), '')
  writeFileSync(join(dir, 'serial'), '1000\n')
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt',
    '-subj', `/CN=${caName}`, '-days', '30', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'])
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    issue (name, cn, options = {}) {
      const ext = ['-addext', `extendedKeyUsage=${options.usage === 'client' ? 'clientAuth' : 'serverAuth,clientAuth'}`]
      if (options.sans !== undefined) ext.push('-addext', `subjectAltName=${options.sans}`)
      openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`, ...ext])
      const validity = options.expired === true ? ['-startdate', '20200101000000Z', '-enddate', '20200131000000Z'] : ['-days', String(options.days ?? 30)]
      openssl(dir, ['ca', '-batch', '-notext', '-config', 'ca.cnf', '-cert', 'ca.crt', '-keyfile', 'ca.key', '-in', `${name}.csr`, '-out', `${name}.crt`, ...validity])
      return describe(dir, name)
    },
    selfSigned (name, cn, sans) {
      const ext = sans === undefined ? [] : ['-addext', `subjectAltName=${sans}`]
      openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', `/CN=${cn}`, '-days', '30', ...ext])
      return describe(dir, name)
    },
    remove () { rmSync(dir, { recursive: true, force: true }) },
  }
}
