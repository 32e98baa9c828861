import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ConfigVersion } from './config-store.js'
import { sha256 } from './config-store.js'

/** Where an instance keeps the last version it applied: `<data dir>/config-store/`. */
export function copyFolder (dataDir: string): string {
  return join(dataDir, 'config-store')
}

/**
 * Saves the version just applied (its text, and its record beside it), each written to a temporary file and
 * renamed over the old one, so a crash or a second worker writing at the same moment never leaves half a file.
 */
export async function saveOfflineCopy (dataDir: string, version: ConfigVersion): Promise<void> {
  const folder = copyFolder(dataDir)
  await mkdir(folder, { recursive: true })
  const { text, ...record } = version
  const suffix = `${process.pid}.${Date.now()}.tmp`
  await writeFile(join(folder, `applied.yaml.${suffix}`), text)
  await writeFile(join(folder, `applied.json.${suffix}`), `${JSON.stringify(record, null, 2)}\n`)
  // The text first: a record never names a text that is not there yet.
  await rename(join(folder, `applied.yaml.${suffix}`), join(folder, 'applied.yaml'))
  await rename(join(folder, `applied.json.${suffix}`), join(folder, 'applied.json'))
}

/** The saved copy, or undefined when there is none (or it is unreadable, or its text does not match its hash). */
export async function readOfflineCopy (dataDir: string): Promise<ConfigVersion | undefined> {
  const folder = copyFolder(dataDir)
  try {
    const record = JSON.parse(await readFile(join(folder, 'applied.json'), 'utf8')) as Omit<ConfigVersion, 'text'>
    const text = await readFile(join(folder, 'applied.yaml'), 'utf8')
    return sha256(text) === record.sha256 ? { ...record, text } : undefined
  } catch {
    return undefined
  }
}
