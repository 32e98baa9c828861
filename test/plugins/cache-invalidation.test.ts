import type { FastifyRequest } from 'fastify'
import t from 'tap'
import { invalidationHook } from '../../plugins/cache/invalidation.js'
import { cacheStoreOf, putEntry, type CacheStore } from '../../plugins/cache/store.js'
import type { ResponseHead } from '../../src/plugin/index.js'
import { PolicyAnswer } from '../../src/plugin/gateway-error.js'

// RFC 9111 §4.4 as the cache's head hook applies it to an unsafe request's answer: which URLs it drops.

function storeWith (urls: string[]): CacheStore {
  const store = cacheStoreOf({ cacheStoreMaxBytes: 1_000_000 })
  const body = Buffer.from('x')
  for (const url of urls) {
    for (const partition of ['client-a', 'client-b']) {
      putEntry(store, `route\0${partition}\0${url}\0`, { headers: {}, body, storedAt: Date.now(), url, answer: new PolicyAnswer(200, {}, body) }, 60_000)
    }
  }
  return store
}

function answer (status: number, headers: Record<string, string> = {}): ResponseHead {
  return { status, header: (name: string) => headers[name.toLowerCase()] } as unknown as ResponseHead
}

const PUT = { raw: { url: '/shop/items/1?v=2' }, headers: { host: 'gw.example:8443' } } as unknown as FastifyRequest

function kept (store: CacheStore): string[] {
  return [...new Set([...store.entries.values()].map((e) => e.url))].sort()
}

t.test('a 2xx or 3xx drops the target URI for every partition; 1xx, 4xx and 5xx drop nothing', async (t) => {
  for (const status of [200, 201, 204, 303]) {
    const store = storeWith(['/shop/items/1?v=2', '/shop/items/1', '/shop/items/2'])
    invalidationHook(store)(answer(status), PUT)
    t.same(kept(store), ['/shop/items/1', '/shop/items/2'], `${status}: the exact URL (query included) only`)
    t.equal(store.entries.size, 4)
    t.same([...store.keysByUrl.keys()].sort(), ['/shop/items/1', '/shop/items/2'])
  }
  for (const status of [100, 400, 409, 500, 502]) {
    const store = storeWith(['/shop/items/1?v=2'])
    invalidationHook(store)(answer(status), PUT)
    t.equal(store.entries.size, 2, `${status}: nothing dropped`)
  }
})

t.test('Location and Content-Location on the same host are dropped too, relative or absolute; another host\'s are not', async (t) => {
  const store = storeWith(['/shop/items/1?v=2', '/shop/items/9', '/shop/list?page=1', '/elsewhere'])
  invalidationHook(store)(answer(201, { location: '9', 'content-location': 'http://gw.example:8443/shop/list?page=1' }), PUT)
  t.same(kept(store), ['/elsewhere'])
  const other = storeWith(['/elsewhere', '/shop/items/1?v=2'])
  invalidationHook(other)(answer(200, { location: 'https://cdn.example/elsewhere', 'content-location': 'http://gw.example:9999/elsewhere' }), PUT)
  t.same(kept(other), ['/elsewhere'], 'another host (or port) is never invalidated')
})

t.test('a Location that is not a URL is ignored', async (t) => {
  const store = storeWith(['/shop/items/1?v=2', '/a'])
  invalidationHook(store)(answer(302, { location: 'http://[bad' }), PUT)
  t.same(kept(store), ['/a'])
})
