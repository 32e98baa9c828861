import { addFieldError, throwIfInvalid, type FieldErrors } from '../payments/validation-errors.js'
import type { ContentSettings } from './settings.js'

export interface ListQuery {
  page: number
  perPage: number
  type?: string
}

const POSITIVE = /^[1-9][0-9]{0,8}$/

/** Parses `page`, `per_page` and `type`; bad values answer 422 validation_failed with field errors. */
export function parseListQuery (query: unknown, settings: ContentSettings): ListQuery {
  const q = (query ?? {}) as Record<string, unknown>
  // Most lists are asked for without parameters: the first page at the default size, with no checks to make.
  if (q.page === undefined && q.per_page === undefined && q.type === undefined) return { page: 1, perPage: settings.default_per_page }
  const errors: FieldErrors = {}
  const single = (name: string): string | undefined => {
    const value = q[name]
    if (value === undefined) return undefined
    if (typeof value !== 'string') { addFieldError(errors, name, 'must be given once'); return undefined }
    return value
  }
  const pageText = single('page')
  const perPageText = single('per_page')
  const type = single('type')
  let page = 1
  let perPage = settings.default_per_page
  if (pageText !== undefined) {
    if (POSITIVE.test(pageText)) page = Number(pageText)
    else addFieldError(errors, 'page', 'must be an integer >= 1')
  }
  if (perPageText !== undefined) {
    if (POSITIVE.test(perPageText) && Number(perPageText) <= settings.max_per_page) perPage = Number(perPageText)
    else addFieldError(errors, 'per_page', `must be an integer from 1 to ${settings.max_per_page}`)
  }
  if (type !== undefined && (type.length === 0 || type.length > 100)) addFieldError(errors, 'type', 'must be 1 to 100 characters')
  throwIfInvalid(errors, 'The query parameters are invalid.')
  return type === undefined ? { page, perPage } : { page, perPage, type }
}
