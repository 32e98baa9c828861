import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest, Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startLaneSimulator } from '../simulators/lane-simulator.js'
import { repoPath } from '../helpers/paths.js'

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
  const child = spawn(process.execPath, [repoPath('bin/lanegate.js'), 'start', '--config', repoPath('gateway.yaml'), '--port', '0', '--host', '127.0.0.1'], {
    env: { ...process.env, LANEGATE_DATA_DIR: dir, LANE_001_URL: lane.url, LANEGATE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString()
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (m) resolve(Number(m[1]))
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${output}`)))
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const base = `http://127.0.0.1:${port}`
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

  const inFlight = get(`${base}/v1/stores/org_store_001/live/__sim/slow?ms=1500`, auth)
  await new Promise((resolve) => setTimeout(resolve, 300))
  child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 200))

  const late = await get(`${base}/healthz`, {}, agent).catch((error: Error) => ({ status: -1, body: error.message }))
  t.ok(late.status === 503 || late.status === -1, `a new request during shutdown gets 503 or a closed connection (got ${late.status})`)
  const finished = await inFlight
  t.equal(finished.status, 200, 'the in-flight request completed')
  t.equal(await exited, 0)
  agent.destroy()
  t.match(output, /shutting down/)
})
