import type { Answer } from './answer.js'
import type { CallOptions, HttpCore } from './http-core.js'

/** Options of a live call. */
export interface LiveCallOptions extends CallOptions {
  /** Query string forwarded to the lane as it is. */
  query?: URLSearchParams | Record<string, string>
  /** Content type of a string or byte body (an object body is sent as JSON). */
  contentType?: string
}

/** A body for a live write: an object or array (sent as JSON), a string or bytes (sent as they are). */
export type LiveBody = string | Uint8Array | Record<string, unknown> | unknown[]

/**
 * The lane live proxy (`/v1/stores/{store_org_id}/live/{path}`, scopes `exchange:live.read` /
 * `exchange:live.write`). `path` is the lane path, unencoded (`items/42`): each segment is percent-encoded here.
 * The lane's 1xx–3xx answer is returned as it is (body parsed when JSON); a lane 4xx/5xx is thrown as
 * `upstream_error` with the lane's status. GET, PUT and DELETE are retried on 5xx; POST and PATCH only with an
 * `Idempotency-Key` header.
 */
export class LiveApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  get (storeOrgId: string, path: string, options: LiveCallOptions = {}): Promise<Answer> {
    return this.#send('GET', storeOrgId, path, undefined, options)
  }

  post (storeOrgId: string, path: string, body?: LiveBody, options: LiveCallOptions = {}): Promise<Answer> {
    return this.#send('POST', storeOrgId, path, body, options)
  }

  put (storeOrgId: string, path: string, body?: LiveBody, options: LiveCallOptions = {}): Promise<Answer> {
    return this.#send('PUT', storeOrgId, path, body, options)
  }

  patch (storeOrgId: string, path: string, body?: LiveBody, options: LiveCallOptions = {}): Promise<Answer> {
    return this.#send('PATCH', storeOrgId, path, body, options)
  }

  delete (storeOrgId: string, path: string, options: LiveCallOptions = {}): Promise<Answer> {
    return this.#send('DELETE', storeOrgId, path, undefined, options)
  }

  #send (method: string, storeOrgId: string, path: string, body: LiveBody | undefined, options: LiveCallOptions): Promise<Answer> {
    const lanePath = path.split('/').filter((s) => s !== '').map(encodeURIComponent).join('/')
    const query = options.query === undefined ? undefined : new URLSearchParams(options.query)
    const raw = typeof body === 'string' || body instanceof Uint8Array
    const headers = { ...options.headers, ...(raw && options.contentType !== undefined ? { 'content-type': options.contentType } : {}) }
    return this.core.send({
      method,
      path: `${this.prefix}/${encodeURIComponent(storeOrgId)}/live/${lanePath}`,
      headers,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      ...(query === undefined ? {} : { query }),
      ...(body === undefined ? {} : raw ? { body } : { json: body }),
    })
  }
}
