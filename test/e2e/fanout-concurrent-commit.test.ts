import t from 'tap'
import type { AddressInfo } from 'node:net'
import { TEST_ORG_HEADER } from '../helpers/service-modules-app.js'
import { fanoutFixture, validPayload } from '../helpers/fanout-fixture.js'

/**
 * RELIABILITY H2 over real sockets: the fan-out service listens on port 0, each store's lane on its own port,
 * and 100 commits of one dispatch race on 100 connections.
 */
t.test('100 concurrent commits: one 200, 99 × 409 fanout_not_previewed, each lane applied exactly once', async (t) => {
  const f = await fanoutFixture(t, { stores: 5 })
  await f.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(f.app.server.address() as AddressInfo).port}/v1/fanout`
  const headers = { [TEST_ORG_HEADER]: 'org_hq', 'content-type': 'application/json' }

  const preview = await fetch(`${base}/preview`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ operation_type: 'price-change', payload: validPayload, store_org_ids: f.storeIds }),
  })
  const { dispatch_id: id, status } = await preview.json() as { dispatch_id: string, status: string }
  t.equal(status, 'previewed')

  const responses = await Promise.all(Array.from({ length: 100 }, async () => {
    const res = await fetch(`${base}/dispatches/${id}/commit`, { method: 'POST', headers: { [TEST_ORG_HEADER]: 'org_hq' } })
    return { status: res.status, body: await res.json() as Record<string, unknown> }
  }))

  const winners = responses.filter((r) => r.status === 200)
  const losers = responses.filter((r) => r.status === 409)
  t.equal(winners.length, 1)
  t.equal(losers.length, 99)
  t.equal(winners[0]?.body.status, 'committed')
  for (const loser of losers) {
    // A loser sees whichever status the winner had reached by then.
    const seen = loser.body.status as string
    t.ok(seen === 'committing' || seen === 'committed', `409 carries the current status (${seen})`)
    t.same(loser.body, {
      error: 'fanout_not_previewed',
      dispatch_id: id,
      status: seen,
      message: `Dispatch ${id} is ${seen}; only a previewed dispatch can be committed, once.`,
    })
  }
  for (const store of f.storeIds) {
    const lane = f.lanes.get(store)
    t.equal(lane?.applyCalls(), 1, `${store} received one apply`)
    t.same([...(lane?.applied.entries() ?? [])], [[`${id}:${store}`, 1]], `${store} applied once under its key`)
  }
})
