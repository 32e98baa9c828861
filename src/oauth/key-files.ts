import { createPublicKey, type KeyObject } from 'node:crypto'
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8, type CryptoKey, type JWK,
} from 'jose'

/** The signature algorithms the gateway signs with. */
export type SigningAlgorithm = 'EdDSA' | 'ES256' | 'RS256'

/**
 * One signing key as it lives on disk: `<kid>.pem` (PKCS8, mode 0600) plus an optional `<kid>.json` sidecar
 * `{"alg": "...", "created": "..."}`. Without a sidecar the algorithm follows from the key type, so an operator
 * can drop in a key made with `openssl genpkey`.
 */
export interface KeyFile {
  readonly kid: string
  readonly alg: SigningAlgorithm
  /** The PEM file's mtime (ms since epoch): when the key was published. */
  readonly publishedAt: number
  readonly privateKey: CryptoKey
  /** Public members only, with `kid`, `use:'sig'` and `alg`. */
  readonly publicJwk: JWK
  readonly path: string
}

/** A key file that cannot be used; boot fails with it (the message names the file). */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError'
}

const KID = /^[A-Za-z0-9_-]{1,128}$/
const PUBLIC_MEMBERS: Record<string, readonly string[]> = { OKP: ['crv', 'x'], EC: ['crv', 'x', 'y'], RSA: ['n', 'e'] }

function algorithmOf (publicKey: KeyObject, path: string): SigningAlgorithm {
  const details = publicKey.asymmetricKeyDetails ?? {}
  switch (publicKey.asymmetricKeyType) {
    case 'ed25519': return 'EdDSA'
    case 'ec':
      if (details.namedCurve === 'prime256v1') return 'ES256'
      break
    case 'rsa':
      if ((details.modulusLength ?? 0) >= 2048) return 'RS256'
      throw new KeyFileError(`${path}: RSA keys must have at least 2048 bits`)
  }
  throw new KeyFileError(`${path}: unsupported key type (use Ed25519, EC P-256 or RSA)`)
}

/** Copies only the public members of a JWK, so no private parameter can ever reach the JWKS (RFC 7517 §4). */
function publicMembers (jwk: JWK, kid: string, alg: SigningAlgorithm): JWK {
  const kty = jwk.kty as string
  const out: JWK = { kty }
  for (const member of PUBLIC_MEMBERS[kty] ?? []) (out as Record<string, unknown>)[member] = (jwk as Record<string, unknown>)[member]
  return { ...out, kid, use: 'sig', alg }
}

async function readSidecarAlg (pemPath: string): Promise<string | undefined> {
  const sidecar = pemPath.replace(/\.pem$/, '.json')
  let text: string
  try {
    text = await readFile(sidecar, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const parsed = JSON.parse(text) as { alg?: unknown }
    return typeof parsed.alg === 'string' ? parsed.alg : undefined
  } catch {
    throw new KeyFileError(`${sidecar}: not valid JSON`)
  }
}

/** Loads one `<kid>.pem` file. */
export async function readKeyFile (dir: string, fileName: string): Promise<KeyFile> {
  const path = join(dir, fileName)
  const kid = fileName.slice(0, -'.pem'.length)
  if (!KID.test(kid)) throw new KeyFileError(`${path}: the file name (the kid) must match ${KID.source}`)
  const [pem, info] = await Promise.all([readFile(path, 'utf8'), stat(path)])
  if (!pem.includes('-----BEGIN PRIVATE KEY-----')) throw new KeyFileError(`${path}: not a PKCS8 PEM private key`)
  let publicKey: KeyObject
  try {
    publicKey = createPublicKey(pem)
  } catch (cause) {
    throw new KeyFileError(`${path}: not a PKCS8 PEM private key`, { cause })
  }
  const alg = algorithmOf(publicKey, path)
  const declared = await readSidecarAlg(path)
  if (declared !== undefined && declared !== alg) {
    throw new KeyFileError(`${path}: the sidecar says alg ${declared} but the key is for ${alg}`)
  }
  const privateKey = await importPKCS8(pem, alg)
  const jwk = publicKey.export({ format: 'jwk' }) as JWK
  return { kid, alg, publishedAt: info.mtimeMs, privateKey, publicJwk: publicMembers(jwk, kid, alg), path }
}

/** Loads every `*.pem` file of a directory, oldest first. */
export async function readKeyDir (dir: string): Promise<KeyFile[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.pem') && !name.startsWith('.'))
  const keys = await Promise.all(names.map((name) => readKeyFile(dir, name)))
  return keys.sort((a, b) => a.publishedAt - b.publishedAt || a.kid.localeCompare(b.kid))
}

/**
 * Generates a key pair for `alg` and writes it as `<kid>.pem` (mode 0600) with its sidecar; the kid is the
 * RFC 7638 thumbprint of the public key. The PEM is written under a temporary name and renamed, so a reader
 * never sees half a key.
 */
export async function generateKeyFile (dir: string, alg: SigningAlgorithm): Promise<string> {
  const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 3072 } : {}) })
  const kid = await calculateJwkThumbprint(await exportJWK(pair.publicKey))
  const pem = await exportPKCS8(pair.privateKey)
  await writeFile(join(dir, `${kid}.json`), JSON.stringify({ alg, created: new Date().toISOString() }) + '\n', { mode: 0o600 })
  const temporary = join(dir, `.${kid}.pem.tmp`)
  await writeFile(temporary, pem, { mode: 0o600 })
  await rename(temporary, join(dir, `${kid}.pem`))
  return kid
}

/** Creates the directory (mode 0700) when missing, generates a key when it holds none, and loads the keys. */
export async function ensureKeyDir (dir: string, alg: SigningAlgorithm): Promise<KeyFile[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const keys = await readKeyDir(dir)
  if (keys.length > 0) return keys
  await generateKeyFile(dir, alg)
  return readKeyDir(dir)
}
