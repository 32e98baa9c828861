import t from 'tap'
import { fanoutFixture, laneRequestCount, validPayload, type FanoutFixture } from '../helpers/fanout-fixture.js'
import { waitFor } from '../helpers/wait-for.js'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

async function previewed (f: FanoutFixture, stores = ['org_s1', 'org_s2']): Promise<string> {
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: stores })
  return res.json().dispatch_id as string
}

const okPreview = (store: string) => ({ status: 'ok', result: { ok: true, store_org_id: store, summary: 'price-change would change 1 item' } })

function applies (f: FanoutFixture, store: string) {
  return f.lanes.get(store)?.requests.filter((r) => r.path.endsWith('/apply')) ?? []
}

t.test('commit applies at every lane once and answers 200 committed with each store\'s result', async (t) => {
  const f = await fanoutFixture(t)
  const id = await previewed(f)
  const res = await f.commit(id)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body.committed_at, ISO)
  t.match(body.completed_at, ISO)
  const delivered = (store: string) => ({
    status: 'applied',
    attempts: 1,
    result: { ok: true, store_org_id: store, applied: true },
    updated_at: body.stores.find((s: { store_org_id: string }) => s.store_org_id === store).delivery.updated_at,
  })
  t.same(body, {
    dispatch_id: id,
    operation_type: 'price-change',
    status: 'committed',
    stores: [
      { store_org_id: 'org_s1', preview: okPreview('org_s1'), delivery: delivered('org_s1') },
      { store_org_id: 'org_s2', preview: okPreview('org_s2'), delivery: delivered('org_s2') },
    ],
    created_at: body.created_at,
    committed_at: body.committed_at,
    completed_at: body.completed_at,
  })
  for (const store of ['org_s1', 'org_s2']) {
    t.same(applies(f, store).map((r) => [r.idempotencyKey, r.body]), [[
      `${id}:${store}`,
      { dispatch_id: id, store_org_id: store, operation_type: 'price-change', payload: validPayload },
    ]])
  }
  t.same(applies(f, 'org_s3'), [], 'stores outside the dispatch get nothing')
})

t.test('GET shows the committed dispatch exactly as commit answered it', async (t) => {
  const f = await fanoutFixture(t)
  const id = await previewed(f)
  const committed = await f.commit(id)
  const res = await f.get(id)
  t.equal(res.statusCode, 200)
  t.same(res.json(), committed.json())
})

t.test('GET of a previewed dispatch shows delivery null and no commit times', async (t) => {
  const f = await fanoutFixture(t)
  const id = await previewed(f, ['org_s1'])
  const res = await f.get(id)
  const body = res.json()
  t.same(body, {
    dispatch_id: id,
    operation_type: 'price-change',
    status: 'previewed',
    stores: [{ store_org_id: 'org_s1', preview: okPreview('org_s1'), delivery: null }],
    created_at: body.created_at,
    committed_at: null,
    completed_at: null,
  })
})

t.test('409 fanout_not_previewed on commit after a failed preview; no lane receives an apply', async (t) => {
  const f = await fanoutFixture(t, { laneModes: { org_s2: { preview: 'reject' } } })
  const id = await previewed(f)
  const res = await f.commit(id)
  t.equal(res.statusCode, 409)
  t.same(res.json(), {
    error: 'fanout_not_previewed',
    dispatch_id: id,
    status: 'preview_failed',
    message: `Dispatch ${id} is preview_failed; only a previewed dispatch can be committed, once.`,
  })
  t.equal(applies(f, 'org_s1').length + applies(f, 'org_s2').length, 0)
})

t.test('409 fanout_not_previewed on a second commit; lanes still applied once', async (t) => {
  const f = await fanoutFixture(t)
  const id = await previewed(f)
  t.equal((await f.commit(id)).statusCode, 200)
  const res = await f.commit(id)
  t.equal(res.statusCode, 409)
  t.same(res.json(), {
    error: 'fanout_not_previewed',
    dispatch_id: id,
    status: 'committed',
    message: `Dispatch ${id} is committed; only a previewed dispatch can be committed, once.`,
  })
  t.equal(applies(f, 'org_s1').length, 1)
  t.equal(applies(f, 'org_s2').length, 1)
})

t.test('404 fanout_dispatch_not_found for another organization\'s dispatch, on GET and commit alike', async (t) => {
  const f = await fanoutFixture(t)
  const id = await previewed(f)
  const before = laneRequestCount(f.lanes)
  for (const res of [await f.get(id, 'org_other'), await f.commit(id, 'org_other'), await f.get(id, 'org_east')]) {
    t.equal(res.statusCode, 404)
    t.same(res.json(), {
      error: 'fanout_dispatch_not_found',
      dispatch_id: id,
      message: `No dispatch ${id} is visible to this organization.`,
    })
  }
  t.equal(laneRequestCount(f.lanes), before, 'no lane contacted')
  t.equal((await f.get(id)).json().status, 'previewed', 'the owner\'s dispatch is untouched')
})

t.test('404 fanout_dispatch_not_found for unknown and malformed ids, same shape', async (t) => {
  const f = await fanoutFixture(t)
  for (const id of ['01J00000000000000000000000', 'not-a-ulid']) {
    for (const res of [await f.get(id), await f.commit(id)]) {
      t.equal(res.statusCode, 404)
      t.same(res.json(), {
        error: 'fanout_dispatch_not_found',
        dispatch_id: id,
        message: `No dispatch ${id} is visible to this organization.`,
      })
    }
  }
})

t.test('a lane answering 503 is retried with backoff and recorded; healthy lanes are applied once', async (t) => {
  const f = await fanoutFixture(t, { laneModes: { org_s2: { apply: 'fail', failTimes: 2 } } })
  const id = await previewed(f, ['org_s1', 'org_s2', 'org_s3'])
  const res = await f.commit(id)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.status, 'committed')
  t.same(body.stores.map((s: { store_org_id: string, delivery: { status: string, attempts: number } }) =>
    [s.store_org_id, s.delivery.status, s.delivery.attempts]), [
    ['org_s1', 'applied', 1],
    ['org_s2', 'applied', 3],
    ['org_s3', 'applied', 1],
  ])
  t.same(applies(f, 'org_s2').map((r) => r.idempotencyKey), [`${id}:org_s2`, `${id}:org_s2`, `${id}:org_s2`], 'same key on every retry')
  t.equal(applies(f, 'org_s1').length, 1)
  t.equal(applies(f, 'org_s3').length, 1)
  for (const lane of f.lanes.values()) for (const n of lane.applied.values()) t.equal(n, 1)
})

t.test('a lane that keeps answering 503 ends partially_failed with its last error; the rest applied', async (t) => {
  const f = await fanoutFixture(t, { laneModes: { org_s1: { apply: 'fail', failTimes: Infinity } } })
  const id = await previewed(f)
  const res = await f.commit(id)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.status, 'partially_failed')
  t.same(body.stores[0].delivery, {
    status: 'failed',
    attempts: 4,
    error: { error: 'upstream_error', upstream_status: 503, message: 'The lane answered 503.', upstream_body: '{"error":"lane busy"}' },
    updated_at: body.stores[0].delivery.updated_at,
  })
  t.equal(body.stores[1].delivery.status, 'applied')
  t.equal(applies(f, 'org_s1').length, 4, 'retry.attempts in total')
  t.equal(applies(f, 'org_s2').length, 1)
})

t.test('a lane answering 409 to the apply fails at once, without retries', async (t) => {
  const f = await fanoutFixture(t, { laneModes: { org_s2: { apply: 'reject' } } })
  const id = await previewed(f)
  const body = (await f.commit(id)).json()
  t.equal(body.status, 'partially_failed')
  t.same([body.stores[1].delivery.status, body.stores[1].delivery.attempts, body.stores[1].delivery.error.upstream_status], ['failed', 1, 409])
  t.equal(applies(f, 'org_s2').length, 1)
})

t.test('202 committing when a lane is still stalled at commit_wait_ms; GET shows the final state later', async (t) => {
  const f = await fanoutFixture(t, {
    // The healthy lane has a whole second to answer inside commit_wait_ms (a loaded CI box is slow); the stalled
    // one is released by setMode below, long before its lane timeout.
    settings: { commit_wait_ms: 1000, lane_timeout_ms: 10000, retry: { attempts: 2, base_delay_ms: 1, max_delay_ms: 1 } },
    laneModes: { org_s2: { apply: 'stall' } },
  })
  const id = await previewed(f)
  const res = await f.commit(id)
  t.equal(res.statusCode, 202)
  const body = res.json()
  t.equal(body.status, 'committing')
  t.same(body.stores.map((s: { delivery: { status: string } }) => s.delivery.status), ['applied', 'pending'], 'the healthy lane is not held up')
  f.lanes.get('org_s2')?.setMode({ apply: 'ok' })
  const final = await waitFor(async () => {
    const answer: { status: string } = (await f.get(id)).json()
    return answer.status === 'committing' ? undefined : answer
  }, { what: 'the dispatch to leave committing' })
  t.equal(final.status, 'committed')
  t.equal(applies(f, 'org_s1').length, 1)
  t.same([...(f.lanes.get('org_s2')?.applied.values() ?? [])], [1], 'applied exactly once after the stall')
})

t.test('a reload that removes a store while its delivery retries: the delivery fails store_not_found, its lane gets nothing more and its upstream retires', async (t) => {
  // org_s1's lane answers 503 to every apply; retries every 300 ms, so the removal lands between two attempts.
  const f = await fanoutFixture(t, {
    laneModes: { org_s1: { apply: 'fail', failTimes: Infinity } },
    settings: { retry: { attempts: 10, base_delay_ms: 300, max_delay_ms: 300 }, commit_wait_ms: 100 },
  })
  const id = await previewed(f)
  t.equal((await f.commit(id)).statusCode, 202, 'org_s1 still retrying')
  t.ok(f.upstreams.lanes.keys().includes('org_s1'), 'the lane\'s upstream was built by its first use')
  // Counted, not assumed to be 1: on a loaded machine a second attempt may come before the reload does.
  const before = applies(f, 'org_s1').length
  t.ok(before >= 1, 'org_s1 was tried')
  await f.removeStores(['org_s1'])
  t.notOk(f.upstreams.lanes.keys().includes('org_s1'), 'the removed store\'s upstream is retired at once')
  const body = await waitFor(async () => {
    const answer = (await f.get(id)).json()
    return answer.status === 'committing' ? undefined : answer
  }, { what: 'the dispatch to leave committing' })
  t.equal(body.status, 'partially_failed')
  t.same(body.stores[0].delivery, {
    status: 'failed',
    attempts: before,
    error: { error: 'store_not_found', message: 'The store no longer has an active install with a lane.' },
    updated_at: body.stores[0].delivery.updated_at,
  })
  t.equal(body.stores[1].delivery.status, 'applied')
  t.equal(applies(f, 'org_s1').length, before, 'no apply reached the removed store\'s lane after the reload')
  t.notOk(f.upstreams.lanes.keys().includes('org_s1'), 'and nothing built it again')
})
