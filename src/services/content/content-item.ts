import { compileSchema } from '../../plugin/validators.js'

/** One content item as written in the source folder. */
export interface ContentItem {
  id: string
  /** `content` (GET /content) or `circular` (GET /circulars). */
  kind: 'content' | 'circular'
  /** Free classification the `type` filter matches (article, promotion, recall, ...). */
  type: string
  title: string
  body: string
  summary?: string
  tags?: string[]
  /** Owner: an organization or store organization id. Callers see the items of their organization tree. */
  organization_id: string
  status: 'published' | 'draft'
  /** ISO 8601 date-time; required when published. */
  published_at?: string
  /** Circulars: first and last day (YYYY-MM-DD) the circular applies. */
  valid_from?: string
  valid_to?: string
}

const DATE = '^\\d{4}-\\d{2}-\\d{2}$'
const DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})$'

const itemSchema = {
  type: 'object',
  description: 'A content item or circular.',
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 200, description: 'Unique id across the folder.' },
    kind: { type: 'string', enum: ['content', 'circular'], default: 'content', description: 'Which list serves it.' },
    type: { type: 'string', minLength: 1, maxLength: 100, description: 'Classification matched by ?type=.' },
    title: { type: 'string', minLength: 1, description: 'Title.' },
    body: { type: 'string', description: 'Body text (markdown or plain).' },
    summary: { type: 'string', description: 'Short summary.' },
    tags: { type: 'array', items: { type: 'string', description: 'A tag.' }, description: 'Tags.' },
    organization_id: { type: 'string', minLength: 1, description: 'Owning organization or store organization.' },
    status: { type: 'string', enum: ['published', 'draft'], description: 'Only published items are served.' },
    published_at: { type: 'string', pattern: DATE_TIME, description: 'ISO 8601 date-time of publication.' },
    valid_from: { type: 'string', pattern: DATE, description: 'Circulars: first day it applies.' },
    valid_to: { type: 'string', pattern: DATE, description: 'Circulars: last day it applies.' },
  },
  required: ['id', 'type', 'title', 'body', 'organization_id', 'status'],
  additionalProperties: false,
}
const validateItem = compileSchema(itemSchema, 'lanegate')

/** Validates (and fills defaults of) one raw item; returns the problems, empty when valid. */
export function itemProblems (raw: unknown): string[] {
  if (!validateItem(raw)) {
    return (validateItem.errors ?? []).map((e) => {
      const at = e.instancePath === '' ? '' : `${e.instancePath.slice(1).replace(/\//g, '.')} `
      if (e.keyword === 'additionalProperties') return `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`
      return `${at}${e.message ?? 'is invalid'}`
    })
  }
  const item = raw as ContentItem
  const problems: string[] = []
  if (item.status === 'published' && item.published_at === undefined) problems.push('published_at is required when status is published')
  if (item.published_at !== undefined && Number.isNaN(Date.parse(item.published_at))) problems.push('published_at is not a valid date-time')
  if (item.kind !== 'circular' && (item.valid_from !== undefined || item.valid_to !== undefined)) {
    problems.push('valid_from/valid_to apply to circulars only (kind: circular)')
  }
  if (item.valid_from !== undefined && item.valid_to !== undefined && item.valid_from > item.valid_to) {
    problems.push('valid_from is after valid_to')
  }
  return problems
}

/** The API view: everything but the internal `kind` and `status` (only published items are ever served). */
export function renderItem (item: ContentItem): Record<string, unknown> {
  const { kind: _kind, status: _status, ...view } = item
  return view
}
