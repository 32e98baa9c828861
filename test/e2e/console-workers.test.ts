import t from 'tap'
import { eventually } from '../helpers/console-gateway.js'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { freshRequest } from '../helpers/fresh-request.js'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

/**
 * `server.workers: 2` on a real `lanegate start`: the primary serves the console and sums the workers' views,
 * as its /metrics does.
 */
t.test('with server.workers: 2 the primary\'s console sums both workers', async (t) => {
  const { gateway, file } = await gatewayFixture().set('server.workers', 2).start(t)
  const admin = gateway.admin as string
  await eventually(async () => {
    const health = await (await fetch(`${admin}/healthz`)).json() as { workers: number }
    return health.workers === 2 ? true : undefined
  }, 20_000, 'both workers serving')

  const token = await fetchGatewayToken(gateway.base, 'demo-status')
  const before = gateway.output().length
  const statuses: number[] = []
  for (let i = 0; i < 20; i++) statuses.push((await freshRequest(gateway.base, '/api/v1/ecommerce/config/processor', { token })).status)
  t.same(statuses, Array.from({ length: 20 }, () => 200))
  t.equal(logPids(gateway.output().slice(before)).size, 2, 'both workers served some of them')

  interface Overview { config_version: number, ready: boolean, workers: number, totals: { requests: number, status: Record<string, number>, tokens: number } }
  const overview = await eventually(async () => {
    const o = await (await fetch(`${admin}/api/console/overview`)).json() as Overview
    return o.totals.status['2xx'] >= 21 ? o : undefined
  }, 15_000, 'the 20 requests and the token summed over the workers')
  t.match(overview, { config_version: 1, ready: true, workers: 2, totals: { status: { '2xx': 21 }, tokens: 1 } })

  const routes = await (await fetch(`${admin}/api/console/routes`)).json() as unknown
  const cli = await runNode(repoPath('bin/lanegate.js'), ['routes', '--config', file, '--json'])
  t.same(routes, JSON.parse(cli.stdout), 'routes as `lanegate routes --json`')
  const upstreams = await (await fetch(`${admin}/api/console/upstreams`)).json() as { upstreams: Array<{ name: string, targets: unknown[] }> }
  t.same(upstreams.upstreams.filter((u) => u.name === 'pricing').map((u) => u.targets.length), [2], 'pricing listed once, its two targets merged over the workers')
  const clients = await (await fetch(`${admin}/api/console/clients`)).json() as { clients: Array<{ client_id: string, tokens_issued: number }>, limits: Array<{ limit: string, keys: Array<{ key: string, used: number, remaining: number }> | null }> }
  t.equal(clients.clients.find((c) => c.client_id === 'demo-status')?.tokens_issued, 1)
  t.match(clients.limits.find((l) => l.limit === 'payments-per-ip')?.keys, [{ key: '127.0.0.1', used: 20, remaining: 80 }], 'the key as the primary counts it for both workers')

  // A pasted token is checked by one worker over IPC: the primary holds no verifier.
  const pasted = async (body: unknown) => (await fetch(`${admin}/api/console/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<unknown>
  t.match(await pasted({ token }), { verified: true, principal: { subject: 'demo-status', client_id: 'demo-status', organization: 'org_hq_demo', scopes: ['commerce:payment-intents.read'], token_type: 'service' } })
  t.same(await pasted({ token: 'not-a-token' }), { verified: false, refusal: { status: 401, code: 'unauthenticated', description: 'The access token is malformed' } })
})

/** The pids of the log lines of answered requests. */
function logPids (output: string): Set<number> {
  const pids = new Set<number>()
  for (const line of output.split('\n')) {
    if (!line.includes('"req"') && !line.includes('request completed')) continue
    try { pids.add((JSON.parse(line) as { pid: number }).pid) } catch {}
  }
  return pids
}
