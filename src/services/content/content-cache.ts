import type { FastifyBaseLogger } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { ContentItem } from './content-item.js'
import { folderSignature, loadContentFolder } from './content-source.js'

interface Entry {
  signature: string
  items: ContentItem[] | undefined
  checkedAt: number
}

/**
 * The loaded content folders, by absolute path. A folder is re-checked at most every `checkMs` (one readdir
 * and a stat per file) and reloaded when a file was added, removed or changed. A folder that became invalid
 * keeps serving its last good items (the problem is logged once per change); a folder never loaded valid
 * answers 500 until it is fixed.
 */
export function createContentCache (logger: FastifyBaseLogger) {
  const entries = new Map<string, Entry>()

  function refresh (dir: string, entry: Entry | undefined, now: number): Entry {
    let signature: string
    try {
      signature = folderSignature(dir)
    } catch (error) {
      signature = `unreadable: ${(error as Error).message}`
    }
    if (entry !== undefined && entry.signature === signature) {
      entry.checkedAt = now
      return entry
    }
    let items = entry?.items
    try {
      items = loadContentFolder(dir)
      logger.info({ dir, items: items.length }, 'content folder loaded')
    } catch (error) {
      logger.error({ err: error, dir }, items === undefined ? 'content folder is invalid' : 'content folder is invalid; serving the last good version')
    }
    const next = { signature, items, checkedAt: now }
    entries.set(dir, next)
    return next
  }

  return {
    items (dir: string, checkMs: number): ContentItem[] {
      const now = Date.now()
      let entry = entries.get(dir)
      if (entry === undefined || now - entry.checkedAt >= checkMs) entry = refresh(dir, entry, now)
      if (entry.items === undefined) throw new GatewayError('internal_error', { message: 'The content folder is invalid.' })
      return entry.items
    },
  }
}

export type ContentCache = ReturnType<typeof createContentCache>
