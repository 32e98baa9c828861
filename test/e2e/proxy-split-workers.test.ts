import { request as httpRequest } from 'node:http'
import t from 'tap'
import { splitBucket } from '../../src/upstream/split.js'
import { splitGateway } from '../helpers/split-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * The split on a real `lanegate start` with `server.workers: 2`: every request on a fresh connection (the primary
 * spreads those over both workers), and each client still lands in one group, the one the hash gives in any process.
 */
t.test('each client keeps its group whichever worker serves it', async (t) => {
  const split = await splitGateway(t)
  const started = await split.fixture.set('server', { workers: 2, log_level: 'info' }).start(t)
  const { gateway } = started
  await waitFor(() => (gateway.output().match(/Server listening at/g) ?? []).length === 2, { what: 'both workers listening' })
  const fresh = (token: string): Promise<{ status: number, body: string }> => new Promise((resolve, reject) => {
    const req = httpRequest(`${gateway.base}/legacy/pricing/prices/1`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
  const clients = Array.from({ length: 30 }, (_, i) => `kiosk-${i}`)
  const tokens = await Promise.all(clients.map((c) => split.token(c)))
  const groups = new Map<string, Set<string>>()
  for (let round = 0; round < 4; round++) {
    for (const [i, token] of tokens.entries()) {
      const res = await fresh(token)
      t.equal(res.status, 200)
      const seen = groups.get(clients[i]!) ?? new Set<string>()
      seen.add(res.body)
      groups.set(clients[i]!, seen)
    }
  }
  t.same([...groups].filter(([, seen]) => seen.size !== 1).map(([c]) => c), [], 'one group per client')
  // And the group the hash gives: legacy 90 / next 10 on 10,000 buckets of the block's name and the client id.
  const expected = new Map(clients.map((c) => [c, splitBucket('pricing', c) < 9000 ? 'legacy' : 'next']))
  t.same([...groups].map(([c, seen]) => [c, [...seen][0]]), [...expected], 'each client in its bucket\'s group, in both workers')
  // Each request's log line names the process that served it: both workers served these clients.
  const pids = new Set([...gateway.output().matchAll(/"pid":(\d+)[^\n]*"url":"\/legacy\/pricing\/prices\/1"/g)].map((m) => m[1]))
  t.equal(pids.size, 2, 'both workers answered')
})
