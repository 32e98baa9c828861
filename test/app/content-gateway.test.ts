import t from 'tap'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'

/** The content service behind the demo gateway.yaml's chain (auth → rate-limit → scope), serving ./content. */
async function boot (t: { teardown (fn: () => unknown): void }): Promise<TestApp> {
  const gw = await buildTestApp()
  t.teardown(() => gw.close())
  return gw
}

t.test('demo content: the demo HQ tree\'s published items, and a 304 on revalidation', async (t) => {
  const { app } = await boot(t)
  const token = await getToken(app, 'demo-content')
  const res = await app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    data: [
      { id: 'demo-promo-001', type: 'promotion', title: 'Store 001 weekend promotion', body: 'Coffee beans 20% off at store 001 this weekend.', organization_id: 'org_store_001', published_at: '2026-11-05T09:00:00Z' },
      { id: 'demo-welcome', type: 'article', title: 'Welcome to the demo HQ', body: 'This item is visible to every caller of org_hq_demo\'s tree.', organization_id: 'org_hq_demo', published_at: '2026-11-01T09:00:00Z' },
    ],
    meta: { page: 1, per_page: 20, total: 2, total_pages: 1 },
  })
  t.equal(res.headers['cache-control'], 'private, no-cache')
  const again = await app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: `Bearer ${token}`, 'if-none-match': res.headers.etag as string } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
})

t.test('demo circulars need engage:circulars.view; a token without the content scopes gets 403 {error:"Forbidden."}', async (t) => {
  const { app } = await boot(t)
  const token = await getToken(app, 'demo-content')
  const circulars = await app.inject({ method: 'GET', url: '/public/v1/circulars', headers: { authorization: `Bearer ${token}` } })
  t.equal(circulars.statusCode, 200)
  t.same(circulars.json().data.map((i: { id: string }) => i.id), ['demo-circular-w45'])
  const checkout = await getToken(app, 'demo-checkout')
  const denied = await app.inject({ method: 'GET', url: '/public/v1/content', headers: { authorization: `Bearer ${checkout}` } })
  t.equal(denied.statusCode, 403)
  t.same(denied.json(), { error: 'Forbidden.' })
})

t.test('no token → 401 {error:"Unauthenticated."}', async (t) => {
  const { app } = await boot(t)
  const res = await app.inject({ method: 'GET', url: '/public/v1/content' })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { error: 'Unauthenticated.' })
})
