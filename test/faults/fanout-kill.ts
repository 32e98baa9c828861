// sleep: only for the phases (load running for phaseMs between two faults is what the case measures); conditions
// are waited for (waitFor, finalOf).
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { startStubLane, type StubLane } from '../helpers/fanout-lane.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor } from '../helpers/wait-for.js'
import { auditFanout, type FanoutDispatch } from './fanout-audit.js'
import { steadyLoad, totalByStatus, type LoadRequest } from './load.js'
import type { FaultRow } from './report.js'

export interface FanoutKillOptions {
  /** Load before the lane dies, while it is down, after it is back, and after the gateway's restart (ms each). */
  phaseMs: number
  concurrency: number
}

/** org_hq_demo's two stores (gateway.yaml): 001's lane stalls at the SIGKILL, 002's lane is the one killed. */
const STALLING = 'org_store_001'
const DYING = 'org_store_002'
const STORES = [STALLING, DYING]
const FINAL = new Set(['committed', 'partially_failed'])

/** A text edit that must apply: a config change that silently did not happen would test the defaults. */
/**
 * Fan-out under a closed loop of previews, each followed by its commit (both stores; SQLite store), with stub
 * lanes that apply once per Idempotency-Key as the protocol requires (test/helpers/fanout-lane.ts) and keep what
 * they applied across their own restart:
 * (a) org_store_002's lane is killed between a preview and its commit, then brought back. A commit while it is
 *     down is answered like any commit (docs/data-exchange.md): 200 with `partially_failed` once its apply
 *     retries run out (that store `failed`, `upstream_status: 0`), or 202 `committing` past `commit_wait_ms`;
 *     never a 5xx. A preview while it is down is 200 `preview_failed`.
 * (b) the gateway is SIGKILLed while a commit's apply on org_store_001 was applied but not answered, and a new
 *     one starts on the same config and data dir; its recovery sweep must finish that dispatch.
 * Then every dispatch a commit reached must be final, each lane must have applied each dispatch at most once
 * (counted by the body's dispatch_id, so a resend under another key counts too), and every store the gateway
 * reports `applied` must really be applied (lost otherwise).
 */
export async function fanoutKill (options: FanoutKillOptions): Promise<FaultRow> {
  const failures: string[] = []
  const lanes = new Map<string, StubLane>()
  for (const store of STORES) lanes.set(store, await startStubLane())
  const stalling = lanes.get(STALLING) as StubLane
  const dying = lanes.get(DYING) as StubLane
  const closeLanes = (): Promise<unknown> => Promise.all([...lanes.values()].map((l) => l.close()))
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('rate_limits.exchange-per-client.points', 10000000)
    // Short recovery timings (as the e2e tests): a dead instance's dispatch resumes after ~1 s, not 30 s.
    .set('services.fanout.commit_wait_ms', 2000)
    .set('services.fanout.retry', { attempts: 3, base_delay_ms: 50, max_delay_ms: 200 })
    .set('services.fanout.recovery', { lease_ms: 1000, sweep_interval_ms: 100 })
    .write().catch(async (error: unknown) => {
    await closeLanes()
    throw error
  })
  const env = { LANE_001_URL: stalling.url, LANE_002_URL: dying.url }
  let gw: SpawnedGateway = await spawnGateway({ config: cfg.file, env }).catch(async (error: unknown) => {
    await Promise.all([cfg.remove(), closeLanes()])
    throw error
  })
  // While the gateway is being restarted the loops wait here, as clients behind a load balancer would.
  let up: Promise<void> = Promise.resolve()
  let release = (): void => {}
  let load: ReturnType<typeof steadyLoad> | undefined
  try {
    const token = await fetchGatewayToken(gw.base, 'demo-exchange')
    const auth = { authorization: `Bearer ${token}` }
    const json = { ...auth, 'content-type': 'application/json' }
    let serial = 0
    const previewBody = (): string => JSON.stringify({
      operation_type: 'price-change', payload: { product_code: String(4000 + serial++), retail_price: '1.99' }, store_org_ids: STORES,
    })
    const send = async (method: string, path: string, body?: string): Promise<{ status: number, body: FanoutDispatch }> => {
      const res = await fetch(`${gw.base}/v1/fanout${path}`, { method, headers: body === undefined ? auth : json, body })
      return { status: res.status, body: await res.json() as FanoutDispatch }
    }
    const finalOf = (id: string): Promise<FanoutDispatch> => waitFor(async () => {
      const got = await send('GET', `/dispatches/${id}`)
      return FINAL.has(got.body.status) ? got.body : undefined
    }, { what: `dispatch ${id} to reach a final status`, intervalMs: 50 })

    const known = new Set<string>()
    const acknowledged = new Set<string>()
    const toCommit: (string | undefined)[] = []
    const loopOf = new WeakMap<LoadRequest, number>()
    let killedBase: string | undefined
    let previewFailed = 0
    load = steadyLoad(options.concurrency, async (loop) => {
      await up
      const id = toCommit[loop]
      const req: LoadRequest = id === undefined
        ? { kind: 'preview', method: 'POST', url: `${gw.base}/v1/fanout/preview`, headers: json, body: previewBody() }
        : { kind: 'commit', method: 'POST', url: `${gw.base}/v1/fanout/dispatches/${id}/commit`, headers: auth }
      loopOf.set(req, loop)
      return req
    }, (answer, sent) => {
      const loop = loopOf.get(sent) as number
      if (sent.kind === 'commit') toCommit[loop] = undefined
      // No answer: only from the SIGKILLed gateway. A commit's fate is then read from the store at the end.
      if (answer.status === -1) {
        if (killedBase === undefined || !sent.url.startsWith(killedBase)) failures.push(`${sent.kind}: no answer from a running gateway`)
        return
      }
      let body: FanoutDispatch
      try {
        body = JSON.parse(answer.body) as FanoutDispatch
      } catch {
        failures.push(`${sent.kind}: ${answer.status} not JSON: ${answer.body.slice(0, 120)}`)
        return
      }
      if (sent.kind === 'preview' && answer.status === 200) {
        known.add(body.dispatch_id)
        if (body.status === 'previewed') toCommit[loop] = body.dispatch_id
        else previewFailed += 1
      } else if (sent.kind === 'commit' && (answer.status === 200 || answer.status === 202)) {
        acknowledged.add(body.dispatch_id)
        if (answer.status === 200 && !FINAL.has(body.status)) failures.push(`commit 200 with status ${body.status}`)
      } else {
        failures.push(`${sent.kind}: ${answer.status} ${answer.body.slice(0, 120)}`)
      }
    })
    await sleep(options.phaseMs)

    // (a) Previewed with both lanes up; org_store_002's lane dies; committed while it is down.
    const prepared: string[] = []
    for (let i = 0; i < 2; i++) {
      const preview = await send('POST', '/preview', previewBody())
      if (preview.status !== 200 || preview.body.status !== 'previewed') throw new Error(`preview before the lane kill: ${preview.status} ${JSON.stringify(preview.body)}`)
      prepared.push(preview.body.dispatch_id)
      known.add(preview.body.dispatch_id)
    }
    await dying.down()
    const deadLane: string[] = []
    for (const id of prepared) {
      const commit = await send('POST', `/dispatches/${id}/commit`)
      if (commit.status !== 200 && commit.status !== 202) failures.push(`commit with ${DYING}'s lane down: ${commit.status} ${JSON.stringify(commit.body)}`)
      acknowledged.add(id)
      // Waited for while the lane is still down, so its apply retries can only run out.
      const final = await finalOf(id)
      const dead = final.stores.find((s) => s.store_org_id === DYING)?.delivery
      const alive = final.stores.find((s) => s.store_org_id === STALLING)?.delivery
      const seen = `${commit.status} ${commit.body.status}, final ${final.status} (${DYING} ${dead?.status ?? 'none'} upstream_status ${dead?.error?.upstream_status ?? '-'} ${dead?.error?.upstream_failure ?? ''}, ${STALLING} ${alive?.status ?? 'none'})`
      deadLane.push(seen)
      if (final.status !== 'partially_failed' || dead?.status !== 'failed' || dead.error?.upstream_status !== 0 || alive?.status !== 'applied') {
        failures.push(`commit with ${DYING}'s lane down: ${seen}`)
      }
    }
    await sleep(options.phaseMs)
    await dying.up()
    await sleep(options.phaseMs)

    // (b) A commit whose apply org_store_001 applied but never answered, then SIGKILL and a new gateway.
    const preview = await send('POST', '/preview', previewBody())
    if (preview.body.status !== 'previewed') throw new Error(`preview before the SIGKILL: ${preview.status} ${JSON.stringify(preview.body)}`)
    const killedId = preview.body.dispatch_id
    known.add(killedId)
    stalling.setMode({ apply: 'apply-then-stall' })
    const killedCommit = fetch(`${gw.base}/v1/fanout/dispatches/${killedId}/commit`, { method: 'POST', headers: auth }).then((r) => r.status, () => -1)
    await waitFor(() => stalling.changes.some((c) => c.body.dispatch_id === killedId), { what: `${STALLING}'s lane to apply ${killedId}` })
    up = new Promise((resolve) => { release = resolve })
    killedBase = gw.base
    gw.child.kill('SIGKILL')
    await gw.exited
    stalling.setMode({ apply: 'ok' })
    const killedAnswer = await killedCommit
    acknowledged.add(killedId)
    gw = await spawnGateway({ config: cfg.file, env })
    const restartedAt = Date.now()
    release()
    const resumed = await finalOf(killedId)
    const recoveryMs = Date.now() - restartedAt
    if (resumed.status !== 'committed') failures.push(`the commit cut by SIGKILL ended ${resumed.status}: ${JSON.stringify(resumed.stores)}`)
    await sleep(options.phaseMs)
    const result = await load.stop()
    if (gw.child.exitCode !== null) failures.push(`the restarted gateway exited (${gw.child.exitCode})`)

    const audit = await auditFanout({ known, acknowledged, lanes, get: async (id) => (await send('GET', `/dispatches/${id}`)).body })
    failures.push(...audit.failures)
    const byStatus = totalByStatus(result.counts)
    return {
      case: 'Fan-out: a store lane killed between preview and commit, the gateway SIGKILLed mid-commit and restarted',
      load: `${options.concurrency} loops, each a preview of 2 stores then its commit`,
      sent: result.sent,
      byStatus,
      lost: audit.lost,
      duplicated: audit.duplicated,
      recoveryMs,
      failures: [...new Set(failures)].slice(0, 5),
      notes: [
        `dispatches: ${audit.byStatus}; previews answered preview_failed (lane down): ${previewFailed}`,
        `commit with ${DYING}'s lane down: ${deadLane.join('; ')}`,
        `commit cut by SIGKILL answered ${killedAnswer === -1 ? 'nothing' : killedAnswer}, ${STALLING} got its apply ${stalling.requests.filter((r) => r.body.dispatch_id === killedId && r.path.endsWith('/apply')).length} times (applied ${stalling.changes.filter((c) => c.body.dispatch_id === killedId).length})`,
        `lane resends deduped by Idempotency-Key: ${audit.resends}; applied on a lane but reported failed: ${audit.appliedButFailed}`,
      ].join('; '),
    }
  } finally {
    release()
    await load?.stop()
    gw.child.kill('SIGKILL')
    await gw.exited
    await cfg.remove()
    await closeLanes()
  }
}
