import type { CallOptions, HttpCore } from './http-core.js'

/** A published content item or circular (docs/content.md); optional fields are absent when not set. */
export interface ContentItem {
  id: string
  type: string
  title: string
  body: string
  summary?: string
  tags?: string[]
  organization_id: string
  published_at: string
  /** Circulars only (`YYYY-MM-DD`). */
  valid_from?: string
  valid_to?: string
}

export interface PageMeta {
  page: number
  per_page: number
  total: number
  total_pages: number
}

/** One page of a list. */
export interface ContentPage {
  data: ContentItem[]
  meta: PageMeta
}

export interface ListParams {
  /** Only items of this `type`. */
  type?: string
  /** 1-based (default 1). */
  page?: number
  /** 1..the gateway's `max_per_page` (default: the gateway's `default_per_page`). */
  perPage?: number
}

/**
 * The content endpoints (`/public/v1` by default): `list` (`GET /content`, scope `engage:content.view`) and
 * `circulars` (`GET /circulars`, scope `engage:circulars.view`), one page each, and `listAll` / `allCirculars`,
 * which walk every page from `page` on.
 */
export class ContentApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  list (params: ListParams = {}, options: CallOptions = {}): Promise<ContentPage> {
    return this.#page('/content', params, options)
  }

  circulars (params: ListParams = {}, options: CallOptions = {}): Promise<ContentPage> {
    return this.#page('/circulars', params, options)
  }

  /** Every item of `GET /content`, page after page. */
  listAll (params: ListParams = {}, options: CallOptions = {}): AsyncGenerator<ContentItem, void, undefined> {
    return this.#all('/content', params, options)
  }

  /** Every item of `GET /circulars`, page after page. */
  allCirculars (params: ListParams = {}, options: CallOptions = {}): AsyncGenerator<ContentItem, void, undefined> {
    return this.#all('/circulars', params, options)
  }

  async * #all (path: string, params: ListParams, options: CallOptions): AsyncGenerator<ContentItem, void, undefined> {
    for (let page = params.page ?? 1; ; page++) {
      const answer = await this.#page(path, { ...params, page }, options)
      yield * answer.data
      if (page >= answer.meta.total_pages || answer.data.length === 0) return
    }
  }

  #page (path: string, params: ListParams, options: CallOptions): Promise<ContentPage> {
    const query = new URLSearchParams()
    if (params.type !== undefined) query.set('type', params.type)
    if (params.page !== undefined) query.set('page', String(params.page))
    if (params.perPage !== undefined) query.set('per_page', String(params.perPage))
    return this.core.json<ContentPage>({ ...options, method: 'GET', path: `${this.prefix}${path}`, query })
  }
}
