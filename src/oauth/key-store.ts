import type { FastifyBaseLogger } from 'fastify'
import { createLocalJWKSet, type JWK, type JWTVerifyGetKey } from 'jose'
import type { GatewayConfig } from '../config/types.js'
import type { KeyStore } from '../runtime/shared-resources.js'
import { resolveDataPath } from './data-path.js'
import { ensureKeyDir, readKeyDir, type KeyFile } from './key-files.js'

/**
 * How long a new key is published before tokens are signed with it (RELIABILITY C1): jose's
 * `createRemoteJWKSet` keeps a JWKS for 10 minutes (`cacheMaxAge`), an instance notices a new file within one
 * rescan (1 min) and the JWKS response may be cached for 1 min (metadata.ts); 15 minutes covers all three.
 */
export const ACTIVATION_DELAY_MS = 15 * 60 * 1000

/** How often the key directory is re-read, so a key file added or deleted takes effect without a restart. */
export const RESCAN_INTERVAL_MS = 60 * 1000

export interface KeyStoreOptions {
  /** Defaults to ACTIVATION_DELAY_MS. */
  activationDelayMs?: number
  /** Defaults to RESCAN_INTERVAL_MS; 0 turns rescanning off. */
  rescanIntervalMs?: number
  /** Clock in ms (tests). */
  now?: () => number
  /** Where rescan problems are reported. */
  logger?: FastifyBaseLogger
}

/** The file-backed key store: a KeyStore that can re-read its directory and be closed. */
export interface FileKeyStore extends KeyStore {
  /** The resolved key directory. */
  readonly dir: string
  /** Re-reads the key directory now. A broken directory keeps the keys loaded before (and is logged). */
  refresh (): Promise<void>
  /** Stops rescanning. */
  close (): void
}

/**
 * Picks the key to sign with: the newest key published at least `activationDelayMs` ago. When no key is that
 * old (first start, or every key was just added) the oldest key signs: it has been published longest.
 */
export function selectSigningKey (keys: readonly KeyFile[], now: number, activationDelayMs: number): KeyFile {
  if (keys.length === 0) throw new Error('no signing key loaded')
  const oldestFirst = [...keys].sort((a, b) => a.publishedAt - b.publishedAt || a.kid.localeCompare(b.kid))
  const active = oldestFirst.filter((key) => now - key.publishedAt >= activationDelayMs)
  return active.at(-1) ?? (oldestFirst[0] as KeyFile)
}

/**
 * Loads (or on first start generates) the gateway's signing keys from `<server.data_dir>/<issuer.key_dir>`.
 * Every key file present is published in the JWKS; see `selectSigningKey` for which one signs. Old keys stay
 * published until their file is deleted.
 */
export async function createKeyStore (config: GatewayConfig, options: KeyStoreOptions = {}): Promise<FileKeyStore> {
  const dir = resolveDataPath(config, config.issuer.key_dir)
  const activationDelayMs = options.activationDelayMs ?? ACTIVATION_DELAY_MS
  const now = options.now ?? Date.now
  let keys = await ensureKeyDir(dir, config.issuer.algorithm)
  let localSet = createLocalJWKSet(publicJwks(keys))

  async function refresh (): Promise<void> {
    try {
      const loaded = await readKeyDir(dir)
      if (loaded.length === 0) throw new Error('the key directory holds no key')
      keys = loaded
      localSet = createLocalJWKSet(publicJwks(keys))
    } catch (error) {
      options.logger?.warn({ err: error, dir }, 'key directory rescan failed; keeping the keys loaded before')
    }
  }

  const interval = options.rescanIntervalMs ?? RESCAN_INTERVAL_MS
  const timer = interval > 0 ? setInterval(() => { void refresh() }, interval).unref() : undefined

  // The signing key is read on every token request; it changes only when the key set changes or a pending key
  // comes of age, so the choice is kept until then instead of sorting the keys per request.
  let signingFor: readonly KeyFile[] | undefined
  let signingUntil = 0
  let signing: KeyStore['signing'] | undefined

  function currentSigning (): KeyStore['signing'] {
    const at = now()
    if (signing === undefined || signingFor !== keys || at >= signingUntil) {
      const key = selectSigningKey(keys, at, activationDelayMs)
      signing = { kid: key.kid, alg: key.alg, privateKey: key.privateKey }
      signingFor = keys
      signingUntil = nextActivation(keys, at, activationDelayMs)
    }
    return signing
  }

  const resolve: JWTVerifyGetKey = function resolveGatewayKey (header, token) {
    return localSet(header, token)
  }

  return {
    dir,
    get signing () {
      return currentSigning()
    },
    jwks: () => publicJwks(keys),
    resolve,
    refresh,
    close: () => { if (timer) clearInterval(timer) },
  }
}

/** When the next key not yet active becomes active (Infinity when every key is). */
function nextActivation (keys: readonly KeyFile[], now: number, activationDelayMs: number): number {
  let next = Infinity
  for (const key of keys) {
    const activeAt = key.publishedAt + activationDelayMs
    if (activeAt > now && activeAt < next) next = activeAt
  }
  return next
}

function publicJwks (keys: readonly KeyFile[]): { keys: JWK[] } {
  return { keys: keys.map((key) => ({ ...key.publicJwk })) }
}
