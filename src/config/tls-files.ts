import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import type { ServerTlsConfig } from './types.js'

/** Which setting a TLS file problem belongs to (the YAML key it is reported under). */
export type TlsFileField = 'cert_file' | 'key_file' | 'ca_file' | 'client_ca_file'

/** A TLS file that cannot be used: the setting it came from, and why in words (never the file's contents). */
export class TlsFileError extends Error {
  constructor (readonly field: TlsFileField, message: string) {
    super(message)
    this.name = 'TlsFileError'
  }
}

/** A certificate chain and its key, read and checked together. */
export interface CertificatePair {
  /** The PEM chain as read (leaf first). */
  readonly cert: Buffer
  readonly key: Buffer
  /** The leaf certificate. */
  readonly leaf: X509Certificate
  /** The leaf's not-after time. */
  readonly notAfter: Date
  /** The leaf's serial number, upper-case hex (logs name it on rotation). */
  readonly serial: string
}

/**
 * What a file looked like when it was read (stat taken just before the read, so a write in between shows as a
 * difference later, never the reverse): a watcher started later compares with it to learn of a change it missed.
 */
export interface FileStamp {
  readonly file: string
  readonly mtimeMs: number
  readonly size: number
  readonly ino: number
}

/** The stamp of `file` now (throws as statSync does). */
export function stampOf (file: string): FileStamp {
  const { mtimeMs, size, ino } = statSync(file)
  return { file, mtimeMs, size, ino }
}

/** The listener's files (`server.tls`) as validation read and checked them: handed on, so a start reads them once. */
export interface ListenerFiles {
  readonly pair: CertificatePair
  /** `client_ca_file`'s bundle, when set. */
  readonly clientCa: Buffer | undefined
  /** The files as they were read. */
  readonly stamps: readonly FileStamp[]
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

function readTlsFile (file: string, field: TlsFileField, stamps?: FileStamp[]): Buffer {
  try {
    if (stamps !== undefined) stamps.push(stampOf(file))
    return readFileSync(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new TlsFileError(field, code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot be read (${code ?? (error as Error).message})`)
  }
}

/** Every certificate of a PEM bundle; at least one, each parsable. */
export function parseCertificates (pem: Buffer, file: string, field: TlsFileField): X509Certificate[] {
  const blocks = pem.toString('latin1').match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) throw new TlsFileError(field, `${file}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block)
    } catch (error) {
      throw new TlsFileError(field, `${file}: certificate ${i + 1} cannot be parsed (${(error as Error).message})`)
    }
  })
}

/** A CA bundle (PEM), checked to hold at least one parsable certificate. */
export function readCaBundle (file: string, field: TlsFileField = 'ca_file', stamps?: FileStamp[]): Buffer {
  const pem = readTlsFile(file, field, stamps)
  parseCertificates(pem, file, field)
  return pem
}

/**
 * Reads a certificate chain and its private key and checks they belong together: each file readable, the chain
 * parsable, the key parsable and the leaf's. Throws `TlsFileError` naming the setting at fault. With `stamps`, each
 * file's stamp is added to it as it is read.
 */
export function loadCertificatePair (certFile: string, keyFile: string, stamps?: FileStamp[]): CertificatePair {
  const cert = readTlsFile(certFile, 'cert_file', stamps)
  const leaf = parseCertificates(cert, certFile, 'cert_file')[0] as X509Certificate
  const key = readTlsFile(keyFile, 'key_file', stamps)
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(key)
  } catch (error) {
    throw new TlsFileError('key_file', `${keyFile}: not a PEM private key (${(error as Error).message})`)
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new TlsFileError('key_file', `${keyFile}: the key does not match the certificate in ${certFile}`)
  return { cert, key, leaf, notAfter: new Date(leaf.validTo), serial: leaf.serialNumber.toUpperCase() }
}

/** Reads and checks `server.tls`'s files: the pair, and the callers' CA when set. Throws `TlsFileError`. */
export function loadListenerFiles (tls: ServerTlsConfig): ListenerFiles {
  const stamps: FileStamp[] = []
  const pair = loadCertificatePair(tls.cert_file, tls.key_file, stamps)
  const clientCa = tls.client_ca_file === undefined ? undefined : readCaBundle(tls.client_ca_file, 'client_ca_file', stamps)
  return { pair, clientCa, stamps }
}
