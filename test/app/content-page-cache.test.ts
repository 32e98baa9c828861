import t from 'tap'
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import content from '../../src/services/content/index.js'
import { createPageCache } from '../../src/services/content/page-cache.js'
import { buildIndexes } from '../../src/config/indexes.js'
import type { ContentItem } from '../../src/services/content/content-item.js'
import { caller, contentServiceConfig, serviceTestConfig } from '../helpers/payments-config.js'
import { buildServiceModulesApp } from '../helpers/service-modules-app.js'
import { repoPath } from '../helpers/paths.js'

const FIXTURES = repoPath('test/fixtures/content')
const url = '/public/v1/content'

t.test('a page cached for one organization is never served to another', async (t) => {
  const { app } = await buildServiceModulesApp(serviceTestConfig('content', contentServiceConfig(FIXTURES)), [content])
  t.teardown(() => app.close())
  const ids = async (org: string, query = '') =>
    (await app.inject({ method: 'GET', url: `${url}${query}`, headers: caller(org) })).json().data.map((i: { id: string }) => i.id)
  const hq = await ids('org_hq')
  t.same(hq, ['hq-2', 'hq-1', 'store-1-hours', 'child-1', 'hq-3'])
  t.same(await ids('org_other'), ['other-1'])
  t.same(await ids('org_store_1'), ['store-1-hours'])
  t.same(await ids('org_noacct'), [])
  t.same(await ids('org_hq'), hq)
  t.same(await ids('org_other', '?per_page=2'), ['other-1'])
  t.same(await ids('org_hq', '?per_page=2'), ['hq-2', 'hq-1'])
})

t.test('a config reload that changes the organization tree changes the next page', async (t) => {
  const service = contentServiceConfig(FIXTURES)
  const { app, setConfig } = await buildServiceModulesApp(serviceTestConfig('content', service), [content])
  t.teardown(() => app.close())
  const first = await app.inject({ method: 'GET', url, headers: caller('org_hq') })
  t.same(first.json().data.map((i: { id: string }) => i.id), ['hq-2', 'hq-1', 'store-1-hours', 'child-1', 'hq-3'])

  const next = serviceTestConfig('content', service)
  next.organizations = next.organizations.map((o) => (o.id === 'org_child' ? { ...o, parent: undefined } : o))
  await setConfig(next)
  const second = await app.inject({ method: 'GET', url, headers: caller('org_hq', { 'if-none-match': first.headers.etag as string }) })
  t.equal(second.statusCode, 200)
  t.same(second.json().data.map((i: { id: string }) => i.id), ['hq-2', 'hq-1', 'store-1-hours', 'hq-3'])
  t.not(second.headers.etag, first.headers.etag)
})

t.test('a file changed on disk after a page was cached is served on the next check', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-content-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await cp(join(FIXTURES, 'store-1.json'), join(dir, 'store-1.json'))
  const { app } = await buildServiceModulesApp(serviceTestConfig('content', contentServiceConfig(dir)), [content])
  t.teardown(() => app.close())
  const before = await app.inject({ method: 'GET', url, headers: caller('org_hq') })
  t.same(before.json().data.map((i: { id: string }) => i.id), ['store-1-hours'])
  t.equal((await app.inject({ method: 'GET', url, headers: caller('org_hq', { 'if-none-match': before.headers.etag as string }) })).statusCode, 304)

  await writeFile(join(dir, 'store-1.json'), JSON.stringify({ id: 'store-1-hours', type: 'notice', title: 'New hours', body: 'Changed.', organization_id: 'org_store_1', status: 'published', published_at: '2026-02-20T12:00:00+01:00' }))
  const after = await app.inject({ method: 'GET', url, headers: caller('org_hq', { 'if-none-match': before.headers.etag as string }) })
  t.equal(after.statusCode, 200)
  t.same(after.json().data, [{ id: 'store-1-hours', type: 'notice', title: 'New hours', body: 'Changed.', organization_id: 'org_store_1', published_at: '2026-02-20T12:00:00+01:00' }])
  t.not(after.headers.etag, before.headers.etag)
})

t.test('the page cache renders once per key, and is bounded by count and by size, oldest first out', async (t) => {
  const indexes = buildIndexes(serviceTestConfig('content', contentServiceConfig(FIXTURES)))
  const items: ContentItem[] = []
  const pages = createPageCache({ maxPages: 2, maxChars: 10 })
  let renders = 0
  const render = (body: string) => () => { renders++; return { body, etag: `"${body}"` } }
  const query = { page: 1, perPage: 20 }
  t.same(pages.page(items, indexes, 'org_a', query, render('aaa')), { body: 'aaa', etag: '"aaa"' })
  t.same(pages.page(items, indexes, 'org_a', query, render('zzz')), { body: 'aaa', etag: '"aaa"' })
  t.equal(renders, 1)
  pages.page(items, indexes, 'org_b', query, render('bbb'))
  pages.page(items, indexes, 'org_c', query, render('ccc'))
  t.equal(pages.size, 2)
  t.same(pages.page(items, indexes, 'org_a', query, render('new')).body, 'new')
  t.equal(pages.page(items, indexes, 'org_c', query, render('x')).body, 'ccc')
  // 'ccc' + 'new' = 6 characters; 'ddddd' would make 11 > 10: the oldest goes.
  pages.page(items, indexes, 'org_d', query, render('ddddd'))
  t.equal(pages.page(items, indexes, 'org_a', query, render('y')).body, 'new')
  t.equal(pages.page(items, indexes, 'org_c', query, render('again')).body, 'again')
  // A page bigger than the whole budget is served but not kept.
  t.equal(pages.page(items, indexes, 'org_e', query, render('eeeeeeeeeee')).body, 'eeeeeeeeeee')
  t.equal(pages.page(items, indexes, 'org_e', query, render('kept?')).body, 'kept?')
})

t.test('another items array or another config snapshot starts a new generation', async (t) => {
  const config = serviceTestConfig('content', contentServiceConfig(FIXTURES))
  const pages = createPageCache()
  const query = { page: 1, perPage: 20, type: 'article' }
  const items: ContentItem[] = []
  const indexes = buildIndexes(config)
  pages.page(items, indexes, 'org_a', query, () => ({ body: 'old', etag: '"old"' }))
  t.equal(pages.page([], indexes, 'org_a', query, () => ({ body: 'reloaded', etag: '"r"' })).body, 'reloaded')
  t.equal(pages.page(items, buildIndexes(config), 'org_a', query, () => ({ body: 'new snapshot', etag: '"n"' })).body, 'new snapshot')
  t.equal(pages.size, 1)
})

t.test('the same organization asking for one page after another gets each page, never the one asked for before', async (t) => {
  // The cache reuses the key of the previous request when nothing it is built of changed: any change must build a new one.
  const indexes = buildIndexes(serviceTestConfig('content', contentServiceConfig(FIXTURES)))
  const items: ContentItem[] = []
  const pages = createPageCache()
  const body = (org: string, query: { page: number, perPage: number, type?: string }) =>
    pages.page(items, indexes, org, query, () => ({ body: `${org}|${query.page}|${query.perPage}|${query.type ?? '-'}`, etag: '"e"' })).body
  const asked: Array<[string, { page: number, perPage: number, type?: string }]> = [
    ['org_a', { page: 1, perPage: 20 }], ['org_a', { page: 2, perPage: 20 }], ['org_a', { page: 2, perPage: 5 }],
    ['org_a', { page: 2, perPage: 5, type: 'article' }], ['org_a', { page: 2, perPage: 5, type: 'promotion' }],
    ['org_a', { page: 2, perPage: 5 }], ['org_b', { page: 2, perPage: 5 }], ['org_a', { page: 1, perPage: 20 }],
  ]
  for (const [org, query] of asked) {
    t.equal(body(org, query), `${org}|${query.page}|${query.perPage}|${query.type ?? '-'}`)
    t.equal(body(org, { ...query }), `${org}|${query.page}|${query.perPage}|${query.type ?? '-'}`, 'asked again, from the cache')
  }
  t.equal(pages.size, 6)
})
