import { isLanegateError } from './errors.js'
import type { CallOptions, HttpCore } from './http-core.js'

/** An `upstream_error`-shaped failure of one store. */
export interface StoreFailure {
  error: string
  /** 0 when the lane did not answer. */
  upstream_status?: number
  upstream_body?: string
  message: string
}

export type DispatchStatus = 'previewed' | 'preview_failed' | 'committing' | 'committed' | 'partially_failed'

/** One store of a dispatch (docs/data-exchange.md, Fan-out). */
export interface DispatchStore {
  store_org_id: string
  preview: { status: 'ok', result: unknown } | { status: 'failed', error: StoreFailure }
  /** Absent in the preview answer; null until commit. */
  delivery?: {
    status: 'pending' | 'applied' | 'failed'
    attempts: number
    result?: unknown
    error?: StoreFailure
    updated_at: string
  } | null
}

export interface Dispatch {
  dispatch_id: string
  operation_type: string
  status: DispatchStatus
  stores: DispatchStore[]
  created_at: string
  committed_at?: string | null
  completed_at?: string | null
}

/** The statuses a dispatch has once a commit went through. */
const COMMITTED: ReadonlySet<unknown> = new Set<DispatchStatus>(['committing', 'committed', 'partially_failed'])

function statusOf (body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>).status : undefined
}

export interface FanoutPreviewInput {
  operation_type: string
  payload: unknown
  store_org_ids: string[]
}

/**
 * Multi-store fan-out (`/v1/fanout`): `preview` (scope `exchange:fanout.preview`) creates a dispatch and asks
 * every lane; `commit` (scope `exchange:fanout.commit`) applies it, once per store; `get` reads it back.
 */
export class FanoutApi {
  constructor (private readonly core: HttpCore, private readonly prefix: string) {}

  /** `POST /preview`. Not retried on 5xx: each attempt would create a dispatch. */
  preview (input: FanoutPreviewInput, options: CallOptions = {}): Promise<Dispatch> {
    return this.core.json<Dispatch>({ ...options, method: 'POST', path: `${this.prefix}/preview`, json: input })
  }

  /** `GET /dispatches/:dispatch_id`. */
  get (dispatchId: string, options: CallOptions = {}): Promise<Dispatch> {
    return this.core.json<Dispatch>({ ...options, method: 'GET', path: `${this.prefix}/dispatches/${encodeURIComponent(dispatchId)}` })
  }

  /**
   * `POST /dispatches/:dispatch_id/commit`: resolves with the dispatch, `committed`/`partially_failed` when every
   * store settled within the gateway's wait (200), else `committing` (202; poll `get`). Idempotent by its dispatch
   * id, so retried on 5xx and lost connections: when an attempt whose answer was lost did commit, the resend
   * answers 409 `fanout_not_previewed` with a post-commit `status`, and this resolves with the dispatch (`get`)
   * instead. A commit of a dispatch already committed before this call still throws `fanout_not_previewed`.
   */
  async commit (dispatchId: string, options: CallOptions = {}): Promise<Dispatch> {
    try {
      return await this.core.json<Dispatch>({ ...options, method: 'POST', path: `${this.prefix}/dispatches/${encodeURIComponent(dispatchId)}/commit`, idempotent: true })
    } catch (error) {
      if (isLanegateError(error, 'fanout_not_previewed') && error.resent && COMMITTED.has(statusOf(error.body))) return await this.get(dispatchId, options)
      throw error
    }
  }
}
