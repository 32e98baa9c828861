import type { FastifyReply, FastifyRequest } from 'fastify'
import type { GatewaySettings, PolicyContext, PolicyStep, ResponseHead, ResponseHeadHook } from '../../src/plugin/index.js'
import { cacheStoreOf, dropUrl, type CacheStore } from './store.js'

/** Methods that do not change the resource (RFC 9110 §9.2.1): their answers invalidate nothing. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

export function isUnsafe (method: string): boolean {
  return !SAFE.has(method)
}

/**
 * The head hook of an unsafe request: once its answer is known to be a success or a redirect (RFC 9111 §4.4: a
 * "non-error status code"), drops what the cache holds for the request URL and for the answer's `Location` and
 * `Content-Location` when they name this same host. It runs before the head is written, so a GET sent after the
 * caller saw the answer never meets the old entry.
 */
export function invalidationHook (store: CacheStore): ResponseHeadHook {
  return function invalidateWritten (head: ResponseHead, request: FastifyRequest): void {
    if (head.status < 200 || head.status >= 400) return
    const url = request.raw.url ?? ''
    dropUrl(store, url)
    for (const name of ['location', 'content-location']) {
      const named = sameHostUrl(head.header(name), request.headers.host, url)
      if (named !== undefined) dropUrl(store, named)
    }
  }
}

/**
 * The step the pipeline appends to every route whose chain does not end in `cache`, in a snapshot where some
 * route caches: a write through another route (a PUT route beside a cached GET route) invalidates too. A safe
 * request costs one Set lookup.
 */
export function writeInvalidationStep (settings: GatewaySettings, onResponseHead: PolicyContext['onResponseHead']): PolicyStep {
  const invalidate = invalidationHook(cacheStoreOf(settings))
  return function invalidateCacheOnWrite (request: FastifyRequest, reply: FastifyReply): undefined {
    if (isUnsafe(request.method)) onResponseHead(reply, invalidate)
    return undefined
  }
}

/** A Location / Content-Location value as the path and query of a URL of this host, or undefined. */
function sameHostUrl (value: string | number | string[] | undefined, host: string | undefined, requestUrl: string): string | undefined {
  if (typeof value !== 'string' || value === '' || host === undefined) return undefined
  try {
    const base = new URL(requestUrl, `http://${host}`)
    const named = new URL(value, base)
    // Another host's URI is never invalidated (RFC 9111 §4.4: it could be used to deny service).
    return named.host === base.host ? `${named.pathname}${named.search}` : undefined
  } catch {
    return undefined
  }
}
