import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repoPath } from './paths.js'

export interface TempConfig {
  dir: string
  /** The config file (inside `dir`; the data dir is `dir/data`). */
  file: string
  /** Rewrites the file with `edit` applied to the shipped gateway.yaml's text. */
  write (edit?: (text: string) => string): Promise<void>
  remove (): Promise<void>
}

/**
 * A copy of the shipped gateway.yaml in a temporary folder, edited by `edit` (plain text replacements), with
 * `source_dir` pointing at the repository's content folder (relative paths resolve against the config's folder).
 */
export async function tempConfig (edit: (text: string) => string = (text) => text): Promise<TempConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-cfg-'))
  const file = join(dir, 'gateway.yaml')
  const shipped = await readFile(repoPath('gateway.yaml'), 'utf8')
  const base = shipped.replace('source_dir: ./content', `source_dir: ${repoPath('content')}`)
  const write = async (change: (text: string) => string = edit): Promise<void> => writeFile(file, change(base))
  await write()
  return { dir, file, write, remove: () => rm(dir, { recursive: true, force: true }) }
}

/** Replaces `key: <anything up to the comment>` under the first occurrence of `key:` (a server setting, etc.). */
export function setKey (text: string, key: string, value: string): string {
  const pattern = new RegExp(`^(\\s*${key}:)[^#\\n]*`, 'm')
  if (!pattern.test(text)) throw new Error(`no ${key} in the config`)
  return text.replace(pattern, `$1 ${value} `)
}
