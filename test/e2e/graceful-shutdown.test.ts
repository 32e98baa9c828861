import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest, Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startLaneSimulator } from '../simulators/lane-simulator.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

function get (url: string, headers: Record<string, string>, agent?: Agent): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('SIGTERM lets in-flight requests finish, refuses new ones (503 or a closed idle connection), then exits 0', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-term-'))
  const lane = await startLaneSimulator({ name: 'slow-lane' })
  t.teardown(async () => {
    await lane.close()
    await rm(dir, { recursive: true, force: true })
  })
  const { child, base, output, exited } = await spawnGateway({ env: { LANEGATE_DATA_DIR: dir, LANE_001_URL: lane.url } })
  const tokenRes = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=demo-exchange&client_secret=demo-exchange-secret&scope=exchange%3Alive.read',
  })
  const { access_token: token } = await tokenRes.json() as { access_token: string }
  const auth = { authorization: `Bearer ${token}` }

  // A keep-alive connection that stays open across the signal.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.equal((await get(`${base}/healthz`, {}, agent)).status, 200)

  // In flight for 3 s from its arrival at the lane: the waits below end as soon as their event happens.
  const inFlight = get(`${base}/v1/stores/org_store_001/live/__sim/slow?ms=3000`, auth)
  await waitFor(() => lane.requests.some((r) => r.url.includes('/__sim/slow')), { what: 'the slow request to reach the lane' })
  child.kill('SIGTERM')
  await waitForText(output, 'shutting down: finishing in-flight requests', { what: 'the drain to begin' })

  const late = await get(`${base}/healthz`, {}, agent).catch((error: Error) => ({ status: -1, body: error.message }))
  t.ok(late.status === 503 || late.status === -1, `a new request during shutdown gets 503 or a closed connection (got ${late.status})`)
  const finished = await inFlight
  t.equal(finished.status, 200, 'the in-flight request completed')
  t.equal(await exited, 0)
  agent.destroy()
  t.match(output(), /shutting down/)
})
