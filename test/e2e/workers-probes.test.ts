import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * Issue 24: with `server.workers: 2` the active health probes run once per host (one worker probes, the primary
 * passes its results to the other), on a real `lanegate start`: a backend sees one probe per interval, not two,
 * and a target whose probe fails is left out by both workers.
 */
interface Backend { server: Server, url: string, name: string, probes: number, healthy: boolean, probedAt: number[] }

async function backend (name: string): Promise<Backend> {
  const b: Backend = { server: createServer(), url: '', name, probes: 0, healthy: true, probedAt: [] }
  b.server.on('request', (req, res) => {
    if (req.url === '/health') {
      b.probes++
      b.probedAt.push(Date.now())
      res.writeHead(b.healthy ? 200 : 500).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ served_by: name }))
  })
  await new Promise<void>((resolve) => b.server.listen(0, '127.0.0.1', resolve))
  b.url = `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`
  return b
}

/** A GET on a fresh connection (the primary's round-robin spreads those over both workers). */
function fresh (url: string, token: string): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('one prober per host: the probe rate is one worker\'s, and a failed probe ejects the target in every worker', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-workers-probes-'))
  const a = await backend('a')
  const b = await backend('b')
  t.teardown(async () => {
    for (const s of [a, b]) { s.server.closeAllConnections(); s.server.close() }
    await rm(dir, { recursive: true, force: true })
  })
  const config = join(dir, 'gateway.yaml')
  await writeFile(config, gatewayFixture()
    .set('server.data_dir', join(dir, 'data'))
    .set('server.workers', 2)
    .set('services.pricing.upstream.targets', [a.url, { url: b.url, weight: 1 }])
    .set('services.pricing.upstream.health.active.interval_seconds', 1)
    .text())
  const gateway = await spawnGateway({ config })
  t.teardown(async () => { gateway.child.kill('SIGTERM'); await gateway.exited })
  await waitFor(() => (gateway.output().match(/Server listening at/g) ?? []).length === 2, { what: 'both workers listening' })

  // The probe rate is the subject: from backend a's third probe (past any probes of the start), the time its next
  // four take. One prober (a 1 s setInterval) needs 4 s for them, a late timer only more; two probing workers
  // would need about 2 s.
  await waitFor(() => a.probedAt.length >= 7, { what: 'seven probes of backend a' })
  const span = (a.probedAt[6] ?? 0) - (a.probedAt[2] ?? 0)
  t.ok(span >= 3_000, `four probes of backend a took ${span} ms at a 1 s interval (two probing workers: ~2000 ms)`)

  const token = await fetchGatewayToken(gateway.base, 'demo-pricing')
  b.healthy = false
  await waitFor(() => /upstream target failed its health check/.test(gateway.output()), { what: 'the failed probe logged' })
  // Both workers left b out: every request on a fresh connection (spread over both) is served by a.
  const served = await Promise.all(Array.from({ length: 12 }, () => fresh(`${gateway.base}/legacy/pricing/prices/1`, token)))
  t.same(served.map((r) => [r.status, JSON.parse(r.body).served_by]), Array(12).fill([200, 'a']), 'b left out by both workers')
  const lines = gateway.output().split('\n').filter((l) => l.includes('failed its health check'))
  t.equal(new Set(lines.map((l) => (JSON.parse(l) as { pid: number }).pid)).size, 2, 'each worker logged the ejection it applied')
})
