import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/**
 * Client secrets are stored as scrypt PHC strings: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64, no padding).
 * Generated secrets carry ≥256 bits of entropy, so a moderate cost (32 MiB, ~70 ms here) is plenty; repeated
 * token requests do not re-hash because successful verifications are cached by a keyed digest (client-auth.ts).
 * scrypt has no 72-byte truncation (unlike bcrypt): every byte of the secret counts.
 */
const DEFAULT_LOG_N = 15
const KEY_LENGTH = 32
const SALT_LENGTH = 16
const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

function scrypt (secret: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(secret, salt, length, options, (error, key) => error ? reject(error) : resolve(key))
  })
}

function b64 (buffer: Buffer): string {
  return buffer.toString('base64').replace(/=+$/, '')
}

export interface ParsedSecretHash {
  logN: number
  r: number
  p: number
  salt: Buffer
  hash: Buffer
}

/** Parses a PHC scrypt string; undefined when it is not one (config validation reports that). */
export function parseSecretHash (phc: string): ParsedSecretHash | undefined {
  const m = PHC.exec(phc)
  if (!m) return undefined
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (logN < 10 || logN > 20 || r < 1 || p < 1) return undefined
  const hash = Buffer.from(m[5] as string, 'base64')
  if (hash.length < 16) return undefined
  return { logN, r, p, salt: Buffer.from(m[4] as string, 'base64'), hash }
}

function scryptOptions (logN: number, r: number, p: number): ScryptOptions {
  return { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 * 1024 }
}

/** Hashes a secret into a PHC string for gateway.yaml (`lanegate hash-secret`). */
export async function hashSecret (secret: string, logN = DEFAULT_LOG_N): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const hash = await scrypt(secret, salt, KEY_LENGTH, scryptOptions(logN, 8, 1))
  return `$scrypt$ln=${logN},r=8,p=1$${b64(salt)}$${b64(hash)}`
}

/** Constant-time check of a secret against a parsed hash. Always does the full scrypt work. */
export async function verifySecret (secret: string, parsed: ParsedSecretHash): Promise<boolean> {
  const candidate = await scrypt(secret, parsed.salt, parsed.hash.length, scryptOptions(parsed.logN, parsed.r, parsed.p))
  return timingSafeEqual(candidate, parsed.hash)
}

/** A fixed hash used for unknown client ids, so they cost the same scrypt work as a wrong secret. */
export const DUMMY_SECRET_HASH: ParsedSecretHash = {
  logN: DEFAULT_LOG_N, r: 8, p: 1, salt: Buffer.alloc(SALT_LENGTH, 7), hash: Buffer.alloc(KEY_LENGTH, 9),
}
