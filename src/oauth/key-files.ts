import { createPublicKey, type KeyObject } from 'node:crypto'
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
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

/** Name of the lock file held while the first key of a directory is generated. */
export const GENERATE_LOCK = '.generate.lock'

/** A generation lock older than this was left by a process that died while generating; it is taken over. */
const STALE_LOCK_MS = 10_000

/** How long a process waits for another one to finish generating the first key. */
const WAIT_FOR_KEY_MS = 30_000

/**
 * Creates the directory (mode 0700) when missing, generates a key when it holds none, and loads the keys.
 *
 * Several gateways sharing one key directory (a cluster, or the workers of one) may start at the same moment on
 * an empty directory. Each generating its own key would leave them signing with different keys that the others
 * learn of only at their next rescan, so tokens of one fail on the others meanwhile. So the first key is made
 * under an exclusively created lock file: one process generates, the others wait for its key and load it.
 */
export async function ensureKeyDir (dir: string, alg: SigningAlgorithm): Promise<KeyFile[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const lock = join(dir, GENERATE_LOCK)
  const deadline = Date.now() + WAIT_FOR_KEY_MS
  for (;;) {
    const keys = await readKeyDir(dir)
    if (keys.length > 0) return keys
    const held = await tryLock(lock)
    if (held) {
      try {
        // Another process may have finished between the read above and taking the lock.
        const again = await readKeyDir(dir)
        if (again.length > 0) return again
        await generateKeyFile(dir, alg)
        return await readKeyDir(dir)
      } finally {
        await rm(lock, { force: true })
      }
    }
    if (Date.now() > deadline) throw new KeyFileError(`${dir}: no key appeared while ${lock} was held by another process`)
    await sleep(25)
  }
}

/** Creates the lock file exclusively; false when another process holds it (a stale lock is removed first). */
async function tryLock (lock: string): Promise<boolean> {
  try {
    const handle = await open(lock, 'wx', 0o600)
    await handle.writeFile(String(process.pid))
    await handle.close()
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const info = await stat(lock).catch(() => undefined)
  if (info !== undefined && Date.now() - info.mtimeMs > STALE_LOCK_MS) await rm(lock, { force: true })
  return false
}
