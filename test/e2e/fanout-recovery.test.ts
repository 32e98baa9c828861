import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TEST_ORG_HEADER } from '../helpers/service-modules-app.js'
import { priceChange, validPayload } from '../helpers/fanout-fixture.js'
import { startStubLane, type StubLane } from '../helpers/fanout-lane.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * RELIABILITY H3: the gateway is killed with SIGKILL in the middle of a fan-out and restarted over the same
 * SQLite file. At the kill, org_s1 has applied and been recorded, org_s2 has applied but its answer never came
 * back, and org_s3 has not answered at all. After the restart the dispatch must reach `committed` with every store
 * applied exactly once: org_s1 not re-sent, org_s2 re-sent and dropped by the lane's Idempotency-Key dedupe,
 * org_s3 applied once.
 */
const fixture = fileURLToPath(new URL('./fixtures/fanout-gateway.js', import.meta.url))

async function startGateway (configFile: string): Promise<{ child: ChildProcess, base: string }> {
  const child = spawn(process.execPath, [fixture, configFile], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /LISTENING (\d+)/.exec(out)
      if (match !== null) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`gateway exited early (${code})`)))
  })
  return { child, base: `http://127.0.0.1:${port}/v1/fanout` }
}

async function kill (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

t.test('SIGKILL mid fan-out, restart: every store ends applied exactly once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-fanout-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const lanes = new Map<string, StubLane>()
  for (const id of ['org_s1', 'org_s2', 'org_s3']) {
    const lane = await startStubLane()
    lanes.set(id, lane)
    t.teardown(() => lane.close())
  }
  const configFile = join(dir, 'fanout.json')
  writeFileSync(configFile, JSON.stringify({
    sqlite_file: join(dir, 'lanegate.db'),
    organizations: [{
      id: 'org_hq',
      name: 'HQ',
      stores: [...lanes].map(([id, lane]) => ({
        id, name: id, install_active: true, lane: { base_url: lane.url, connect_timeout_ms: 1000, response_timeout_ms: 5000, max_sockets: 8 },
      })),
    }],
    service: {
      prefix: '/v1/fanout',
      envelope: 'exchange',
      policies: [],
      routes: {},
      operations: { 'price-change': priceChange },
      lane_timeout_ms: 60000,
      commit_wait_ms: 200,
      retry: { attempts: 3, base_delay_ms: 10, max_delay_ms: 50 },
      recovery: { lease_ms: 600, sweep_interval_ms: 100 },
    },
  }))

  let gateway = await startGateway(configFile)
  t.teardown(() => kill(gateway.child))
  const headers = { [TEST_ORG_HEADER]: 'org_hq', 'content-type': 'application/json' }
  const preview = await fetch(`${gateway.base}/preview`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s1', 'org_s2', 'org_s3'] }),
  })
  const id = (await preview.json() as { dispatch_id: string }).dispatch_id

  lanes.get('org_s2')?.setMode({ apply: 'apply-then-stall' })
  lanes.get('org_s3')?.setMode({ apply: 'stall' })
  const commit = await fetch(`${gateway.base}/dispatches/${id}/commit`, { method: 'POST', headers: { [TEST_ORG_HEADER]: 'org_hq' } })
  t.equal(commit.status, 202, 'still committing when commit answers')
  const during = await commit.json() as { status: string, stores: { delivery: { status: string } }[] }
  t.same([during.status, during.stores.map((s) => s.delivery.status)], ['committing', ['applied', 'pending', 'pending']])
  await waitFor(() => (lanes.get('org_s3')?.applyCalls() ?? 0) > 0, { what: 'org_s3\'s apply' })
  t.equal(lanes.get('org_s3')?.applyCalls(), 1, 'org_s3 received its apply before the kill')

  await kill(gateway.child)
  for (const lane of lanes.values()) lane.setMode({ apply: 'ok' })

  gateway = await startGateway(configFile)
  type Dispatch = { status: string, stores: { store_org_id: string, delivery: { status: string } }[] }
  const final = await waitFor(async () => {
    const body = await (await fetch(`${gateway.base}/dispatches/${id}`, { headers: { [TEST_ORG_HEADER]: 'org_hq' } })).json() as Dispatch
    return body.status === 'committing' ? undefined : body
  }, { what: 'the restarted gateway\'s recovery sweep to finish the dispatch' })
  t.equal(final?.status, 'committed')
  t.same(final?.stores.map((s) => [s.store_org_id, s.delivery.status]), [['org_s1', 'applied'], ['org_s2', 'applied'], ['org_s3', 'applied']])
  for (const [store, lane] of lanes) {
    t.same([...lane.applied.entries()], [[`${id}:${store}`, 1]], `${store} applied exactly once`)
  }
  t.equal(lanes.get('org_s1')?.applyCalls(), 1, 'a store recorded as applied is not re-sent')
  t.equal(lanes.get('org_s2')?.applyCalls(), 2, 'the unrecorded apply was re-sent with the same key and deduped by the lane')
})
