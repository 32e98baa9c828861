import type { FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../../errors/gateway-error.js'
import type { ContentCache } from './content-cache.js'
import { renderItem, type ContentItem } from './content-item.js'
import { noneMatch, strongEtag } from './etag.js'
import { parseListQuery } from './list-query.js'
import { contentSettingsOf } from './settings.js'

/** Newest first; the id breaks ties so pages are stable. */
function byPublishedDesc (a: ContentItem, b: ContentItem): number {
  const at = Date.parse(a.published_at ?? '')
  const bt = Date.parse(b.published_at ?? '')
  return at !== bt ? bt - at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/**
 * A list route over one kind of item: the caller's organization tree only, published only, optional `type`
 * filter, paginated. The body carries a strong ETag; a matching If-None-Match answers 304 without a body.
 */
export function createListHandler (cache: ContentCache, kind: ContentItem['kind']) {
  return async function listContent (request: FastifyRequest, reply: FastifyReply) {
    const principal = request.gw.principal
    if (principal === undefined) throw new GatewayError('unauthenticated')
    const settings = contentSettingsOf(request.gw.snapshot.config)
    const query = parseListQuery(request.query, settings)
    const reachable = request.gw.snapshot.indexes.reachable(principal.organizationId)

    const matching = cache.items(settings.source_dir, settings.reload_check_ms)
      .filter((item) => item.kind === kind && item.status === 'published' && reachable.has(item.organization_id) &&
        (query.type === undefined || item.type === query.type))
      .sort(byPublishedDesc)
    const start = (query.page - 1) * query.perPage
    const body = JSON.stringify({
      data: matching.slice(start, start + query.perPage).map(renderItem),
      meta: { page: query.page, per_page: query.perPage, total: matching.length, total_pages: Math.ceil(matching.length / query.perPage) },
    })

    const etag = strongEtag(body)
    // The list depends on the caller's organization: shared caches must not serve it to someone else.
    reply.header('etag', etag).header('cache-control', 'private, no-cache').header('vary', 'Authorization')
    const ifNoneMatch = request.headers['if-none-match']
    if (noneMatch(ifNoneMatch, etag)) return reply.code(304).send()
    return reply.type('application/json; charset=utf-8').send(body)
  }
}
