import type { Dispatch, DispatchEntry } from '../../store/dispatch-store.js'

/** Body of a preview answer: the dispatch and each store's preview (`result` when ok, `error` when failed). */
export function renderPreview (d: Dispatch): Record<string, unknown> {
  return {
    dispatch_id: d.dispatchId,
    operation_type: d.operationType,
    status: d.status,
    stores: d.stores.map((s) => ({ store_org_id: s.storeOrgId, preview: renderPreviewOutcome(s) })),
    created_at: d.createdAt,
  }
}

/**
 * Body of GET and commit answers: the preview body plus commit times and each store's `delivery` (null before
 * commit; then `{status: pending|applied|failed, attempts, result|error, updated_at}`).
 */
export function renderDispatch (d: Dispatch): Record<string, unknown> {
  return {
    dispatch_id: d.dispatchId,
    operation_type: d.operationType,
    status: d.status,
    stores: d.stores.map((s) => ({
      store_org_id: s.storeOrgId,
      preview: renderPreviewOutcome(s),
      delivery: s.delivery === null
        ? null
        : {
            status: s.delivery.status,
            attempts: s.delivery.attempts,
            ...(s.delivery.status === 'applied' ? { result: s.delivery.result ?? null } : {}),
            ...(s.delivery.status !== 'applied' && s.delivery.error !== undefined ? { error: s.delivery.error } : {}),
            updated_at: s.delivery.updatedAt,
          },
    })),
    created_at: d.createdAt,
    committed_at: d.committedAt,
    completed_at: d.completedAt,
  }
}

function renderPreviewOutcome (s: DispatchEntry): Record<string, unknown> {
  return s.preview.status === 'ok'
    ? { status: 'ok', result: s.preview.result ?? null }
    : { status: 'failed', error: s.preview.error ?? {} }
}
