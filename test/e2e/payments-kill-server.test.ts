import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway } from '../helpers/spawn-gateway.js'

async function token (base: string): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=demo-checkout&client_secret=demo-checkout-secret',
  })
  return (await res.json() as { access_token: string }).access_token
}

t.test('intents and idempotency keys acknowledged before a kill -9 of the gateway are there after restart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-kill-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const env = { LANEGATE_DATA_DIR: dir }

  const first = await spawnGateway({ env })
  const firstToken = await token(first.base)
  const created: string[] = []
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${first.base}/api/v1/ecommerce/payment-intents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${firstToken}`, 'content-type': 'application/json', 'idempotency-key': `kill-${i}` },
      body: JSON.stringify({ organization_id: 'org_hq_demo', amount: 100 + i, currency: 'usd' }),
    })
    t.equal(res.status, 201)
    created.push((await res.json() as { data: { id: string } }).data.id)
  }
  first.child.kill('SIGKILL')
  t.equal(await first.exited, null, 'killed, not exited')

  const second = await spawnGateway({ env })
  t.teardown(async () => {
    second.child.kill('SIGTERM')
    await second.exited
  })
  // The signing key survived too: the token issued before the kill still works.
  const auth = { authorization: `Bearer ${firstToken}` }
  for (const [i, id] of created.entries()) {
    const res = await fetch(`${second.base}/api/v1/ecommerce/payment-intents/${id}`, { headers: auth })
    t.equal(res.status, 200, `intent ${i} readable after the kill`)
    t.equal((await res.json() as { data: { amount: number } }).data.amount, 100 + i)
  }
  const replay = await fetch(`${second.base}/api/v1/ecommerce/payment-intents`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'kill-19' },
    body: JSON.stringify({ organization_id: 'org_hq_demo', amount: 119, currency: 'usd' }),
  })
  t.equal(replay.status, 201)
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal((await replay.json() as { data: { id: string } }).data.id, created[19])
})
