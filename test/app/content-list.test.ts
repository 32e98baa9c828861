import t from 'tap'
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import content from '../../src/services/content/index.js'
import { caller, contentServiceConfig, serviceTestConfig } from '../helpers/payments-config.js'
import { buildServiceModulesApp } from '../helpers/service-modules-app.js'
import { repoPath } from '../helpers/paths.js'

const FIXTURES = repoPath('test/fixtures/content')

async function build (t: { teardown (fn: () => unknown): void }, dir = FIXTURES, settings: Record<string, unknown> = {}) {
  const { app } = await buildServiceModulesApp(serviceTestConfig('content', contentServiceConfig(dir, settings)), [content])
  t.teardown(() => app.close())
  return app
}

const item = {
  hq1: { id: 'hq-1', type: 'article', title: 'Spring reset', body: 'Planograms change on March 3.', organization_id: 'org_hq', published_at: '2026-03-01T09:00:00Z' },
  hq2: { id: 'hq-2', type: 'promotion', title: 'Two for one', summary: 'Cereal promotion', body: 'All cereals two for one this week.', tags: ['grocery', 'weekly'], organization_id: 'org_hq', published_at: '2026-03-02T09:00:00Z' },
  hq3: { id: 'hq-3', type: 'article', title: 'Older article', body: 'From January.', organization_id: 'org_hq', published_at: '2026-01-15T09:00:00Z' },
  store1: { id: 'store-1-hours', type: 'notice', title: 'Holiday hours', body: 'Store 1 closes at 18:00 on holidays.', organization_id: 'org_store_1', published_at: '2026-02-20T12:00:00+01:00' },
  child: { id: 'child-1', type: 'article', title: 'Child organization news', body: 'Only org_child and its parent org_hq see this.', organization_id: 'org_child', published_at: '2026-02-01T08:00:00Z' },
  other: { id: 'other-1', type: 'article', title: 'Other HQ article', body: 'Never shown to org_hq.', organization_id: 'org_other', published_at: '2026-03-05T09:00:00Z' },
}

t.test('200: the caller\'s tree, published only, newest first, with meta, a strong ETag and private caching', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_hq') })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    data: [item.hq2, item.hq1, item.store1, item.child, item.hq3],
    meta: { page: 1, per_page: 20, total: 5, total_pages: 1 },
  })
  t.match(res.headers.etag, /^"[A-Za-z0-9_-]{32}"$/)
  t.equal(res.headers['cache-control'], 'private, no-cache')
  t.equal(res.headers.vary, 'Authorization')
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
})

t.test('another organization and a store caller see only their own trees', async (t) => {
  const app = await build(t)
  const other = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_other') })
  t.same(other.json(), { data: [item.other], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
  const store = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_store_1') })
  t.same(store.json(), { data: [item.store1], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
  const none = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_noacct') })
  t.same(none.json(), { data: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
})

t.test('?type filters; the ETag differs per response', async (t) => {
  const app = await build(t)
  const all = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_hq') })
  const res = await app.inject({ method: 'GET', url: '/public/v1/content?type=promotion', headers: caller('org_hq') })
  t.same(res.json(), { data: [item.hq2], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
  t.not(res.headers.etag, all.headers.etag)
})

t.test('page / per_page paginate; a page past the end is empty', async (t) => {
  const app = await build(t)
  const page2 = await app.inject({ method: 'GET', url: '/public/v1/content?per_page=2&page=2', headers: caller('org_hq') })
  t.same(page2.json(), { data: [item.store1, item.child], meta: { page: 2, per_page: 2, total: 5, total_pages: 3 } })
  const past = await app.inject({ method: 'GET', url: '/public/v1/content?per_page=2&page=4', headers: caller('org_hq') })
  t.same(past.json(), { data: [], meta: { page: 4, per_page: 2, total: 5, total_pages: 3 } })
})

t.test('422 for bad page, per_page and repeated parameters (plain envelope)', async (t) => {
  const app = await build(t, FIXTURES, { max_per_page: 50 })
  const res = await app.inject({ method: 'GET', url: '/public/v1/content?page=0&per_page=51&type=a&type=b', headers: caller('org_hq') })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'validation_failed',
    errors: { type: ['must be given once'], page: ['must be an integer >= 1'], per_page: ['must be an integer from 1 to 50'] },
    message: 'The query parameters are invalid.',
  })
  for (const query of ['page=abc', 'page=1.5', 'per_page=0', 'per_page=-1', 'page=']) {
    const bad = await app.inject({ method: 'GET', url: `/public/v1/content?${query}`, headers: caller('org_hq') })
    t.equal(bad.statusCode, 422, query)
  }
})

t.test('If-None-Match with the current ETag (strong, weak or *) → 304 without a body', async (t) => {
  const app = await build(t)
  const first = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_hq') })
  const etag = first.headers.etag as string
  for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
    const res = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_hq', { 'if-none-match': header }) })
    t.equal(res.statusCode, 304, header)
    t.equal(res.body, '')
    t.equal(res.headers.etag, etag)
  }
  const stale = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_hq', { 'if-none-match': '"stale"' }) })
  t.equal(stale.statusCode, 200)
  t.equal(stale.body, first.body)
})

t.test('GET /circulars serves the circulars of the tree with their validity', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/public/v1/circulars', headers: caller('org_hq') })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    data: [
      { id: 'circ-s1', type: 'store', title: 'Store 1 flyer', body: 'Store 1 only.', organization_id: 'org_store_1', published_at: '2026-03-03T07:00:00Z', valid_from: '2026-03-04', valid_to: '2026-03-10' },
      { id: 'circ-w10', type: 'weekly', title: 'Week 10 circular', body: 'Weekly deals, March 4 to 10.', organization_id: 'org_hq', published_at: '2026-03-03T06:00:00Z', valid_from: '2026-03-04', valid_to: '2026-03-10' },
    ],
    meta: { page: 1, per_page: 20, total: 2, total_pages: 1 },
  })
})

t.test('no principal → 401 {error:"Unauthenticated."}', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/public/v1/content' })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { error: 'Unauthenticated.' })
})

t.test('a changed folder is reloaded; an invalid change keeps the last good version', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-content-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp(join(FIXTURES, 'store-1.json'), join(dir, 'store-1.json'))
  const app = await build(t, dir)
  const url = '/public/v1/content'
  t.same((await app.inject({ method: 'GET', url, headers: caller('org_hq') })).json().data, [item.store1])

  await writeFile(join(dir, 'new.yaml'), 'id: new-1\ntype: article\ntitle: New\nbody: Fresh.\norganization_id: org_hq\nstatus: published\npublished_at: "2026-04-01T00:00:00Z"\n')
  const fresh = (await app.inject({ method: 'GET', url, headers: caller('org_hq') })).json().data
  t.same(fresh, [{ id: 'new-1', type: 'article', title: 'New', body: 'Fresh.', organization_id: 'org_hq', published_at: '2026-04-01T00:00:00Z' }, item.store1])

  await writeFile(join(dir, 'broken.yaml'), 'id: [unterminated\n')
  const kept = await app.inject({ method: 'GET', url, headers: caller('org_hq') })
  t.equal(kept.statusCode, 200)
  t.same(kept.json().data, fresh)
})

t.test('a folder that never loaded valid answers 500 without details', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-content-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'bad.json'), '{"id": "x"}')
  const app = await build(t, dir)
  const res = await app.inject({ method: 'GET', url: '/public/v1/content', headers: caller('org_hq') })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'Internal server error.' })
})
