import type { FastifyReply, FastifyRequest } from 'fastify'
import { definePolicy, type ResponseHead, type SentResponse, type StepOutcome } from '../../src/plugin/index.js'
import { freshnessMs, parseCacheControl } from './cache-control.js'
import { invalidationHook, isUnsafe } from './invalidation.js'
import { cacheStoreOf, putEntry, storedHeaders, type CachedAnswer } from './store.js'
import { cacheSchema } from './schema.js'

/**
 * `cache`: answers GET and HEAD from memory while an earlier answer of the same route, URL and caller partition is
 * fresh, without calling the handler or the upstream. It must be the last step of its chain (checked at load), so
 * every refusing step — auth, api-key, scope, organization, rate-limit — has run first: a caller the chain refuses
 * never reaches the cache. What is stored obeys the backend: only complete 200 answers of a GET, at most
 * `max_entry_bytes`, not `no-store`, `private` or `no-cache`, no `Set-Cookie`, no `Vary: *`; fresh for
 * `s-maxage`, else `max-age`, else `ttl_seconds`, never longer than `ttl_seconds`. Entries are selected by the
 * request headers the backend's `Vary` and the policy's `vary` name. Every answer says `X-Cache: HIT` or `MISS`.
 * A 2xx/3xx answer to an unsafe method drops what is stored for its URL and its Location / Content-Location
 * (RFC 9111 §4.4), on this route and, through `writeInvalidationStep`, on every route of the snapshot.
 * The memory (`cache_store.max_bytes`, all routes together) belongs to the config snapshot: a reload empties it.
 */
const cache = definePolicy({
  name: 'cache',
  description: 'Answers GET and HEAD from memory while fresh (the backend\'s Cache-Control and Vary obeyed).',
  schema: cacheSchema,
  requires: (options) => options.by === 'none' ? [] : ['auth'],
  summarize: (options) => `GET/HEAD cached up to ${options.ttl_seconds} s per ${options.by === 'none' ? 'route and URL' : options.by}`,
  refusals: () => [],
  explain: (options) => ({ outcome: 'depends', note: `GET/HEAD may be answered from the cache (fresh up to ${options.ttl_seconds} s, per ${options.by}); never refuses` }),
  create (options, context) {
    const store = cacheStoreOf(context.settings)
    const route = `${context.service}\0${context.routeId}`
    const configured = options.vary.map((name) => name.toLowerCase()).sort()
    const by = options.by
    const ttlSeconds = options.ttl_seconds
    const maxEntryBytes = options.max_entry_bytes

    /** The entry's key without the Vary values: route, caller partition and the URL as the chain left it. */
    function primaryKey (request: FastifyRequest): string | undefined {
      const principal = context.principal(request)
      const partition = by === 'none' ? '' : by === 'client' ? principal?.clientId : principal?.organizationId
      return partition === undefined ? undefined : `${route}\0${partition}\0${request.raw.url ?? ''}`
    }

    /** A 200 about to be sent: ask for a copy of its body (at most 64 KiB) for `storeAnswer`. */
    function captureBody (head: ResponseHead): void {
      if (head.status === 200) head.captureBody()
    }

    function storeAnswer (sent: SentResponse, request: FastifyRequest): void {
      if (sent.status !== 200 || sent.body === undefined || sent.body.length > maxEntryBytes) return
      const headers = sent.headers
      if (headers['set-cookie'] !== undefined) return
      const ttlMs = freshnessMs(parseCacheControl(headers['cache-control']), ttlSeconds)
      if (ttlMs <= 0) return
      const backendVary = varyNames(headers.vary)
      if (backendVary === '*') return
      const primary = primaryKey(request)
      if (primary === undefined) return
      const names = [...new Set([...configured, ...backendVary])].sort()
      store.varyNames.set(primary, names)
      const kept = storedHeaders(headers)
      // The answer is built once, here: a hit returns this very object (no header copy, no new answer per hit).
      const url = request.raw.url ?? ''
      const entry: CachedAnswer = { headers: kept, body: sent.body, storedAt: Date.now(), url, answer: context.answer(sent.status, kept, sent.body) }
      putEntry(store, `${primary}\0${varyValues(request, names)}`, entry, ttlMs)
    }

    const invalidate = invalidationHook(store)
    return function cacheStep (request: FastifyRequest, reply: FastifyReply): StepOutcome {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        if (isUnsafe(request.method)) context.onResponseHead(reply, invalidate)
        return
      }
      const primary = primaryKey(request)
      if (primary === undefined) return context.refuse('internal_error', { message: `route ${context.service}/${context.routeId} caches by ${by} but has no principal: auth must run first` })
      const names = store.varyNames.get(primary) ?? configured
      const hit = store.entries.get(`${primary}\0${varyValues(request, names)}`)
      // The gateway answers `Cache-Control: no-store` by default; here the backend's own header (or none) decides.
      reply.removeHeader('cache-control')
      if (hit !== undefined) {
        // Set on the reply, so the stored headers are answered as they are: no object copied per hit.
        reply.header('age', String(Math.floor((Date.now() - hit.storedAt) / 1000)))
        reply.header('x-cache', 'HIT')
        return hit.answer
      }
      reply.header('x-cache', 'MISS')
      if (request.method === 'GET') {
        context.onResponseHead(reply, captureBody)
        context.onResponseSent(reply, storeAnswer)
      }
    }
  },
})

/** The header names of a `Vary` value, lower-case; `'*'` when it varies on everything (never stored). */
function varyNames (value: string | number | string[] | undefined): string[] | '*' {
  if (value === undefined) return []
  const names = (Array.isArray(value) ? value.join(',') : String(value)).split(',').map((n) => n.trim().toLowerCase()).filter((n) => n !== '')
  return names.includes('*') ? '*' : names
}

/** The request's values of the named headers, as one key part (an absent header differs from an empty one). */
function varyValues (request: FastifyRequest, names: readonly string[]): string {
  let key = ''
  for (const name of names) {
    const value = request.headers[name]
    key += value === undefined ? '\u0001' : `=${Array.isArray(value) ? value.join(',') : value}`
    key += '\0'
  }
  return key
}

export default cache
