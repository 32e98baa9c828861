import type { StubLane } from '../helpers/fanout-lane.js'
import { waitFor } from '../helpers/wait-for.js'

/** The parts of a fan-out dispatch body (docs/data-exchange.md) the fault case reads. */
export interface FanoutDispatch {
  dispatch_id: string
  status: string
  stores: {
    store_org_id: string
    delivery: null | { status: string, attempts: number, error?: { upstream_status?: number, upstream_failure?: string } }
  }[]
}

export interface FanoutAudit {
  /** Changes a lane applied more than once for one dispatch. */
  duplicated: number
  /** Store deliveries the gateway reports `applied` that the lane never applied, and acknowledged commits the store forgot. */
  lost: number
  /** Apply requests a lane dropped as a repeat of a key it had applied (resends after a lost answer or a crash). */
  resends: number
  /** Deliveries reported `failed` although the lane applied them (its answer was lost, then the retries ran out). */
  appliedButFailed: number
  /** Dispatches by final status, e.g. `committed: 40, partially_failed: 6, previewed: 3`. */
  byStatus: string
  failures: string[]
}

const FINAL = new Set(['committed', 'partially_failed'])

/**
 * After a fan-out fault run: every dispatch a preview returned (`known`) or a commit was answered for
 * (`acknowledged`) is read back through the API, waiting (with a deadline) for each `committing` one to be
 * finished by the recovery sweep; then each lane's applied changes are counted per dispatch_id of their body.
 */
export async function auditFanout (input: {
  known: Set<string>
  acknowledged: Set<string>
  lanes: Map<string, StubLane>
  get: (id: string) => Promise<FanoutDispatch>
}): Promise<FanoutAudit> {
  const failures: string[] = []
  const dispatches = new Map<string, FanoutDispatch>()
  for (const id of new Set([...input.known, ...input.acknowledged])) {
    try {
      dispatches.set(id, await waitFor(async () => {
        const body = await input.get(id)
        return body.status === 'committing' ? undefined : body
      }, { what: `dispatch ${id} to leave committing`, intervalMs: 50 }))
    } catch (error) {
      failures.push((error as Error).message)
    }
  }
  let lost = 0
  for (const id of input.acknowledged) {
    const status = dispatches.get(id)?.status
    if (status !== undefined && !FINAL.has(status)) {
      lost += 1
      failures.push(`dispatch ${id}: commit acknowledged, status ${status}`)
    }
  }

  let duplicated = 0
  let resends = 0
  let appliedButFailed = 0
  const appliedOn = new Map<string, Map<string, number>>()
  for (const [store, lane] of input.lanes) {
    const perDispatch = new Map<string, number>()
    for (const change of lane.changes) {
      const id = String(change.body.dispatch_id)
      perDispatch.set(id, (perDispatch.get(id) ?? 0) + 1)
      if (change.idempotencyKey !== `${id}:${store}`) failures.push(`${store} applied ${id} under the key ${change.idempotencyKey ?? 'none'}`)
    }
    for (const [id, n] of perDispatch) {
      if (n > 1) {
        duplicated += n - 1
        failures.push(`${store} applied dispatch ${id} ${n} times`)
      }
    }
    resends += lane.applyCalls() - lane.changes.length
    appliedOn.set(store, perDispatch)
  }
  for (const dispatch of dispatches.values()) {
    for (const entry of dispatch.stores) {
      const applied = (appliedOn.get(entry.store_org_id)?.get(dispatch.dispatch_id) ?? 0) > 0
      if (entry.delivery?.status === 'applied' && !applied) {
        lost += 1
        failures.push(`dispatch ${dispatch.dispatch_id}: ${entry.store_org_id} reported applied, never applied by its lane`)
      }
      if (entry.delivery?.status === 'failed' && applied) appliedButFailed += 1
    }
  }
  const counts = new Map<string, number>()
  for (const d of dispatches.values()) counts.set(d.status, (counts.get(d.status) ?? 0) + 1)
  return {
    duplicated,
    lost,
    resends,
    appliedButFailed,
    byStatus: [...counts].map(([s, n]) => `${s}: ${n}`).join(', '),
    failures,
  }
}
