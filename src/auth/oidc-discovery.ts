/** What the gateway uses of an OpenID Connect discovery document (OpenID Connect Discovery 1.0 §3). */
export interface DiscoveryDocument {
  readonly issuer: string
  readonly jwks_uri: string
  readonly introspection_endpoint?: string
}

export interface DiscoveryOptions {
  /** How long a fetched document is used before it is fetched again. */
  readonly refreshMs?: number
  /** After a failed fetch, how long before the next try (a document fetched before keeps being used meanwhile). */
  readonly retryMs?: number
  readonly timeoutMs?: number
}

interface Cached {
  document: DiscoveryDocument | undefined
  /** Epoch ms after which the document is fetched again (or, with none yet, may be tried again). */
  nextFetchMs: number
  pending: Promise<DiscoveryDocument> | undefined
}

/**
 * Returns a reader of discovery documents, cached per URL (and issuer) across config snapshots: fetched on first use, again
 * after `refreshMs`, one fetch at a time. A failed refresh keeps the document fetched before (the provider's keys
 * endpoint rarely moves; an outage of its discovery endpoint must not refuse every token), and with none the
 * failure is the caller's error. The document's `issuer` must be the one configured (§4.3): a discovery URL that
 * answers for another issuer is refused rather than trusted.
 */
export function createDiscovery (options: DiscoveryOptions = {}): (url: string, issuer: string) => Promise<DiscoveryDocument> {
  const refreshMs = options.refreshMs ?? 60 * 60_000
  const retryMs = options.retryMs ?? 30_000
  const timeoutMs = options.timeoutMs ?? 5_000
  const cache = new Map<string, Cached>()

  async function fetchDocument (url: string, issuer: string, cached: Cached): Promise<DiscoveryDocument> {
    try {
      const document = await fetchDiscovery(url, issuer, timeoutMs)
      cached.document = document
      cached.nextFetchMs = Date.now() + refreshMs
      return document
    } catch (error) {
      cached.nextFetchMs = Date.now() + retryMs
      if (cached.document !== undefined) return cached.document
      throw error
    } finally {
      cached.pending = undefined
    }
  }

  return async function discover (url, issuer) {
    // Keyed by issuer too: a reload that points the same URL at another issuer checks the document again.
    const key = `${issuer} ${url}`
    let cached = cache.get(key)
    if (cached === undefined) {
      cached = { document: undefined, nextFetchMs: 0, pending: undefined }
      cache.set(key, cached)
    }
    if (Date.now() < cached.nextFetchMs) {
      if (cached.document !== undefined) return cached.document
      throw new Error(`the discovery document at ${url} could not be fetched; next try in at most ${retryMs / 1000} s`)
    }
    cached.pending ??= fetchDocument(url, issuer, cached)
    return await cached.pending
  }
}

async function fetchDiscovery (url: string, issuer: string, timeoutMs: number): Promise<DiscoveryDocument> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' })
  if (res.status !== 200) throw new Error(`the discovery document at ${url} answered ${res.status}`)
  const body = await res.json() as Record<string, unknown>
  if (body.issuer !== issuer) throw new Error(`the discovery document at ${url} names issuer ${String(body.issuer)}, not ${issuer}`)
  if (typeof body.jwks_uri !== 'string' || !/^https?:\/\//.test(body.jwks_uri)) throw new Error(`the discovery document at ${url} has no http(s) jwks_uri`)
  const introspection = typeof body.introspection_endpoint === 'string' && /^https?:\/\//.test(body.introspection_endpoint) ? body.introspection_endpoint : undefined
  return { issuer, jwks_uri: body.jwks_uri, ...(introspection === undefined ? {} : { introspection_endpoint: introspection }) }
}
