import { readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join, relative } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { itemProblems, type ContentItem } from './content-item.js'

/** A problem in the content folder, with the file it is in. */
export interface ContentProblem {
  file: string
  message: string
}

export class ContentFolderError extends Error {
  constructor (readonly problems: ContentProblem[]) {
    super(problems.map((p) => `${p.file}: ${p.message}`).join('; '))
    this.name = 'ContentFolderError'
  }
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json'])

function listFiles (dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && EXTENSIONS.has(extname(e.name)) && !e.name.startsWith('.'))
    .map((e) => join(e.parentPath, e.name))
    .sort()
}

/** Names, sizes and mtimes of the folder's files: when it changes, the folder is reloaded. */
export function folderSignature (dir: string): string {
  return listFiles(dir).map((file) => {
    const s = statSync(file)
    return `${file}\0${s.size}\0${s.mtimeMs}`
  }).join('\n')
}

/**
 * Reads and validates every item in the folder (synchronously: it is small, and `lanegate validate` uses the
 * same function). Throws ContentFolderError listing every problem; an invalid folder is never half-loaded.
 */
export function loadContentFolder (dir: string): ContentItem[] {
  let files: string[]
  try {
    files = listFiles(dir)
  } catch (error) {
    throw new ContentFolderError([{ file: dir, message: `cannot read the folder: ${(error as Error).message}` }])
  }
  const problems: ContentProblem[] = []
  const items: ContentItem[] = []
  const seen = new Map<string, string>()
  for (const file of files) {
    const name = relative(dir, file)
    let parsed: unknown
    try {
      const text = readFileSync(file, 'utf8')
      parsed = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text)
    } catch (error) {
      problems.push({ file: name, message: `cannot parse: ${(error as Error).message}` })
      continue
    }
    const list = Array.isArray(parsed) ? parsed : [parsed]
    list.forEach((raw: unknown, index) => {
      const where = Array.isArray(parsed) ? `${name}[${index}]` : name
      const itemErrors = itemProblems(raw)
      if (itemErrors.length > 0) {
        for (const message of itemErrors) problems.push({ file: where, message })
        return
      }
      const item = raw as ContentItem
      const first = seen.get(item.id)
      if (first !== undefined) problems.push({ file: where, message: `duplicate id "${item.id}" (first in ${first})` })
      seen.set(item.id, where)
      items.push(item)
    })
  }
  if (problems.length > 0) throw new ContentFolderError(problems)
  return items
}
