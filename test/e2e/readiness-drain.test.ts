import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startLaneSimulator } from '../simulators/lane-simulator.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

t.test('/readyz answers 503 from the moment SIGTERM starts the drain, while in-flight requests finish', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-drain-'))
  const lane = await startLaneSimulator({ name: 'drain-lane' })
  t.teardown(async () => {
    await lane.close()
    await rm(dir, { recursive: true, force: true })
  })
  const { child, base, admin, exited, output } = await spawnGateway({ env: { LANEGATE_DATA_DIR: dir, LANE_001_URL: lane.url } })
  const tokenRes = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=demo-exchange&client_secret=demo-exchange-secret&scope=exchange%3Alive.read',
  })
  const { access_token: token } = await tokenRes.json() as { access_token: string }

  const ready = await fetch(`${admin}/readyz`)
  t.same([ready.status, await ready.json()], [200, { status: 'ready', checks: { config: 'ok', keys: 'ok', database: 'ok' }, failed: [] }])

  // In flight for 3 s from its arrival at the lane: the waits below end as soon as their event happens.
  const inFlight = fetch(`${base}/v1/stores/org_store_001/live/__sim/slow?ms=3000`, { headers: { authorization: `Bearer ${token}` } })
  await waitFor(() => lane.requests.some((r) => r.url.includes('/__sim/slow')), { what: 'the slow request to reach the lane' })
  child.kill('SIGTERM')
  await waitForText(output, 'shutting down: finishing in-flight requests', { what: 'the drain to begin' })

  const draining = await fetch(`${admin}/readyz`)
  t.same([draining.status, await draining.json()], [503, {
    status: 'not_ready',
    checks: { config: 'ok', keys: 'ok', database: 'ok', draining: 'shutting down: finishing in-flight requests' },
    failed: ['draining'],
  }])
  const live = await fetch(`${admin}/healthz`)
  t.equal(live.status, 200, 'liveness stays 200 during the drain')
  t.equal((await inFlight).status, 200, 'the in-flight request completed')
  t.equal(await exited, 0)
})
