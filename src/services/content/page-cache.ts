import type { ConfigIndexes } from '../../config/indexes.js'
import type { ContentItem } from './content-item.js'
import type { ListQuery } from './list-query.js'

/** One rendered list page: the exact response bytes and their ETag. */
export interface RenderedPage {
  readonly body: string
  readonly etag: string
}

export interface PageCacheLimits {
  /** Most pages kept; default 512. */
  readonly maxPages?: number
  /** Most body characters kept over all pages; default 8 Mi. A bigger page is rendered but not kept. */
  readonly maxChars?: number
}

/**
 * The rendered pages of one list route. A page depends only on the loaded items, the config's organization tree
 * (which items an organization reaches) and the query, so it is rendered and hashed once and then served as is.
 * The whole cache belongs to one generation — one items array (the content cache returns a new array only
 * when the folder was reloaded) and one `ConfigIndexes` (built once per config snapshot): a request of another
 * generation starts a new one, so a changed folder or reload can never be answered from an older page.
 * Entries are keyed by the caller's organization, never by anything cheaper, so one organization's page is
 * never served to another. Bounded by count and size (oldest first out): `type` and `page` come from clients.
 */
export function createPageCache (limits: PageCacheLimits = {}) {
  const maxPages = limits.maxPages ?? 512
  const maxChars = limits.maxChars ?? 8 * 1024 * 1024
  let items: readonly ContentItem[] | undefined
  let indexes: ConfigIndexes | undefined
  let pages = new Map<string, RenderedPage>()
  let chars = 0
  // The last key built, and what it was built of: a caller asks for the same page again and again, and the same
  // string (its hash kept by V8) then saves building and hashing a new one per request.
  let last = { organizationId: '', page: 0, perPage: 0, type: undefined as string | undefined, key: '' }

  function keyOf (organizationId: string, query: ListQuery): string {
    if (organizationId === last.organizationId && query.page === last.page && query.perPage === last.perPage && query.type === last.type) return last.key
    // Unambiguous: page and per_page are digits, the organization id is length-prefixed, the type comes last.
    const key = `${query.page} ${query.perPage} ${organizationId.length} ${organizationId} ${query.type ?? ''}`
    last = { organizationId, page: query.page, perPage: query.perPage, type: query.type, key }
    return key
  }

  return {
    /**
     * The page of `organizationId` for `query` over `currentItems` under `currentIndexes`, rendered by `render`
     * when it is not kept.
     */
    page (currentItems: readonly ContentItem[], currentIndexes: ConfigIndexes, organizationId: string, query: ListQuery,
      render: () => RenderedPage): RenderedPage {
      if (currentItems !== items || currentIndexes !== indexes) {
        items = currentItems
        indexes = currentIndexes
        pages = new Map()
        chars = 0
      }
      const key = keyOf(organizationId, query)
      const kept = pages.get(key)
      if (kept !== undefined) return kept
      const rendered = render()
      if (rendered.body.length > maxChars) return rendered
      while (pages.size >= maxPages || (chars + rendered.body.length > maxChars && pages.size > 0)) {
        const [oldestKey, oldest] = pages.entries().next().value as [string, RenderedPage]
        pages.delete(oldestKey)
        chars -= oldest.body.length
      }
      pages.set(key, rendered)
      chars += rendered.body.length
      return rendered
    },
    /** Pages kept now (for tests). */
    get size (): number {
      return pages.size
    },
  }
}

export type PageCache = ReturnType<typeof createPageCache>
