import { join, resolve } from 'node:path'
import { ConfigError } from '../config/config-error.js'
import { parseGatewayConfig, type LoadedGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import { openConfigStore, type ConfigVersion } from './config-store.js'
import { ConfigStoreError, redactUrl } from './errors.js'
import { copyFolder, readOfflineCopy } from './offline-copy.js'

/** `lanegate start --config-store URL [--data-dir DIR]`. */
export interface StoreStartOptions {
  url: string
  /** Where the last applied version is kept (default `./data`): the start falls back to it. */
  dataDir: string
  /** Relative paths of the stored config (TLS files, `plugins:`) resolve against this folder: the working directory. */
  baseDir: string
}

/** What the follower needs to go on from the version the process started with. */
export interface StoreStart extends StoreStartOptions {
  started: ConfigVersion
  /** Said in the log once the logger exists: started from the saved copy, a refused head. */
  notes: { level: 'warn' | 'error', message: string }[]
  /** The head could not be applied here at start (the saved copy was used instead). */
  refused?: { version: number, reason: string, at: number }
}

/** The name the stored text goes by in problems; its folder anchors relative paths. */
export function storedFileName (baseDir: string, version: number): string {
  return join(resolve(baseDir), `config-store-v${version}.yaml`)
}

/**
 * The config an instance following the store starts with: the head, or, when the store is unreachable (or its
 * head cannot be applied on this host), the copy saved in the data dir. With neither it throws one clear line.
 */
export async function loadStoreStartConfig (options: StoreStartOptions, adjust?: (loaded: Pick<LoadedGatewayConfig, 'config'>) => void): Promise<{ loaded: LoadedGatewayConfig, follow: StoreStart }> {
  const head = await readHead(options.url)
  const copy = await readOfflineCopy(options.dataDir)
  const notes: StoreStart['notes'] = []
  if (head instanceof ConfigStoreError) {
    if (copy === undefined) throw new Error(`${head.message}; and ${copyFolder(options.dataDir)} holds no saved copy: not starting with no config`)
    notes.push({ level: 'warn', message: `${head.message}: starting from the saved copy of version ${copy.version} (${copyFolder(options.dataDir)}); following the store once it answers` })
    return { loaded: await parse(copy, options, adjust), follow: { ...options, started: copy, notes } }
  }
  try {
    return { loaded: await parse(head, options, adjust), follow: { ...options, started: head, notes } }
  } catch (error) {
    if (!(error instanceof ConfigError) || copy === undefined || copy.version === head.version) throw error
    const reason = error.problems.map((p) => `${p.path || '(root)'}: ${p.message}`).join('; ')
    notes.push({ level: 'error', message: `config version ${head.version} (by ${head.author}) refused on this host: ${reason}; starting from the saved copy of version ${copy.version}` })
    return { loaded: await parse(copy, options, adjust), follow: { ...options, started: copy, notes, refused: { version: head.version, reason, at: Date.now() } } }
  }
}

async function readHead (url: string): Promise<ConfigVersion | ConfigStoreError> {
  let store
  try {
    store = await openConfigStore(url)
    const head = await store.head()
    return head ?? new ConfigStoreError('empty', `config store ${redactUrl(url)} holds no version yet (push one with lanegate config push FILE -m MSG)`)
  } catch (error) {
    if (error instanceof ConfigStoreError) return error
    throw error
  } finally {
    await store?.close()
  }
}

function parse (version: ConfigVersion, options: StoreStartOptions, adjust?: (loaded: Pick<LoadedGatewayConfig, 'config'>) => void): Promise<LoadedGatewayConfig> {
  return parseGatewayConfig(version.text, storedFileName(options.baseDir, version.version), { adjust })
}
