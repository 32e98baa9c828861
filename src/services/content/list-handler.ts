import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../../plugin/gateway-error.js'
import type { ContentCache } from './content-cache.js'
import { renderItem, type ContentItem } from './content-item.js'
import { noneMatch, strongEtag } from './etag.js'
import { parseListQuery, type ListQuery } from './list-query.js'
import { createPageCache, type RenderedPage } from './page-cache.js'
import { contentSettingsOf } from './settings.js'

/** Newest first; the id breaks ties so pages are stable. */
function byPublishedDesc (a: ContentItem, b: ContentItem): number {
  const at = Date.parse(a.published_at ?? '')
  const bt = Date.parse(b.published_at ?? '')
  return at !== bt ? bt - at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** Renders one page of `kind` items an organization reaches (the slow path; the page cache keeps the result). */
function renderPage (items: readonly ContentItem[], kind: ContentItem['kind'], reachable: ReadonlySet<string>, query: ListQuery): RenderedPage {
  const matching = items
    .filter((item) => item.kind === kind && item.status === 'published' && reachable.has(item.organization_id) &&
      (query.type === undefined || item.type === query.type))
    .sort(byPublishedDesc)
  const start = (query.page - 1) * query.perPage
  const body = JSON.stringify({
    data: matching.slice(start, start + query.perPage).map(renderItem),
    meta: { page: query.page, per_page: query.perPage, total: matching.length, total_pages: Math.ceil(matching.length / query.perPage) },
  })
  return { body, etag: strongEtag(body) }
}

/**
 * A list route over one kind of item: the caller's organization tree only, published only, optional `type`
 * filter, paginated. The body carries a strong ETag; a matching If-None-Match answers 304 without a body.
 * Rendered pages are kept per (folder version, config snapshot, organization, query): see page-cache.ts.
 */
export function createListHandler (cache: ContentCache, kind: ContentItem['kind']) {
  const pages = createPageCache()
  // Synchronous on purpose: everything it needs is in memory, and an async handler costs a promise per request.
  return function listContent (request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const principal = request.gw.principal
    if (principal === undefined) throw new GatewayError('unauthenticated')
    const { snapshot } = request.gw
    const settings = contentSettingsOf(snapshot.config)
    const query = parseListQuery(request.query, settings)
    const items = cache.items(settings.source_dir, settings.reload_check_ms)
    const organizationId = principal.organizationId
    const page = pages.page(items, snapshot.indexes, organizationId, query,
      () => renderPage(items, kind, snapshot.indexes.reachable(organizationId), query))

    // The list depends on the caller's organization: shared caches must not serve it to someone else.
    reply.header('etag', page.etag).header('cache-control', 'private, no-cache').header('vary', 'Authorization')
    if (noneMatch(request.headers['if-none-match'], page.etag)) return reply.code(304).send()
    return reply.type('application/json; charset=utf-8').send(page.body)
  }
}
