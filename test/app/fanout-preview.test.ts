import t from 'tap'
import { fanoutFixture, laneRequestCount, validPayload } from '../helpers/fanout-fixture.js'

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

t.test('200 previewed: every lane previewed, dispatch recorded', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s1', 'org_e1'] })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body.dispatch_id, ULID)
  t.match(body.created_at, ISO)
  t.same(body, {
    dispatch_id: body.dispatch_id,
    operation_type: 'price-change',
    status: 'previewed',
    stores: [
      { store_org_id: 'org_s1', preview: { status: 'ok', result: { ok: true, store_org_id: 'org_s1', summary: 'price-change would change 1 item' } } },
      { store_org_id: 'org_e1', preview: { status: 'ok', result: { ok: true, store_org_id: 'org_e1', summary: 'price-change would change 1 item' } } },
    ],
    created_at: body.created_at,
  })
  const lane = f.lanes.get('org_s1')
  t.same(lane?.requests, [{
    path: '/fanout/price-change/preview',
    idempotencyKey: undefined,
    authorization: undefined,
    body: { dispatch_id: body.dispatch_id, store_org_id: 'org_s1', operation_type: 'price-change', payload: validPayload },
  }])
  t.equal((await f.dispatches.get(body.dispatch_id))?.status, 'previewed')
})

t.test('200 preview_failed when one lane rejects the preview; the others are still reported', async (t) => {
  const f = await fanoutFixture(t, { laneModes: { org_s2: { preview: 'reject' } } })
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s1', 'org_s2'] })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(body, {
    dispatch_id: body.dispatch_id,
    operation_type: 'price-change',
    status: 'preview_failed',
    stores: [
      { store_org_id: 'org_s1', preview: { status: 'ok', result: { ok: true, store_org_id: 'org_s1', summary: 'price-change would change 1 item' } } },
      {
        store_org_id: 'org_s2',
        preview: {
          status: 'failed',
          error: { error: 'upstream_error', upstream_status: 422, message: 'The lane answered 422.', upstream_body: '{"error":"price below cost"}' },
        },
      },
    ],
    created_at: body.created_at,
  })
})

t.test('200 preview_failed when a lane answers 200 {ok:false}', async (t) => {
  const f = await fanoutFixture(t, { laneModes: { org_s1: { preview: 'ok-false' } } })
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s1'] })
  const body = res.json()
  t.same(body.stores, [{
    store_org_id: 'org_s1',
    preview: {
      status: 'failed',
      error: { error: 'upstream_error', upstream_status: 200, message: 'The lane refused the operation.', upstream_body: '{"ok":false,"reason":"locked"}' },
    },
  }])
  t.equal(body.status, 'preview_failed')
})

t.test('200 preview_failed with upstream_status 0 when a lane is unreachable', async (t) => {
  const f = await fanoutFixture(t)
  await f.lanes.get('org_s3')?.close()
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s3'] })
  t.same(res.json().stores[0].preview, {
    status: 'failed',
    error: { error: 'upstream_error', upstream_status: 0, upstream_failure: 'refused', message: 'The lane software could not be reached.', upstream_body: '' },
  })
})

t.test('404 fanout_operation_not_found', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'price-nuke', payload: {}, store_org_ids: ['org_s1'] })
  t.equal(res.statusCode, 404)
  t.same(res.json(), {
    error: 'fanout_operation_not_found',
    operation_type: 'price-nuke',
    message: 'No fan-out operation named "price-nuke" is registered.',
  })
  t.equal(laneRequestCount(f.lanes), 0)
})

t.test('404 fanout_operation_not_found for inherited object keys', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'constructor', payload: {}, store_org_ids: ['org_s1'] })
  t.equal(res.statusCode, 404)
  t.equal(res.json().error, 'fanout_operation_not_found')
})

t.test('422 fanout_payload_validation_failed maps each payload field to its messages', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'price-change', payload: { retail_price: '1.5', colour: 'red' }, store_org_ids: ['org_s1'] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'fanout_payload_validation_failed',
    operation_type: 'price-change',
    errors: {
      product_code: ['is required'],
      colour: ['is not allowed'],
      retail_price: ['must match pattern "^\\d{1,5}\\.\\d{2}$"'],
    },
    message: 'The payload does not match the schema of price-change.',
  })
  t.equal(laneRequestCount(f.lanes), 0)
})

t.test('422 fanout_payload_validation_failed reports a payload of the wrong type under "payload"', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'price-change', payload: 'cheap', store_org_ids: ['org_s1'] })
  t.same(res.json(), {
    error: 'fanout_payload_validation_failed',
    operation_type: 'price-change',
    errors: { payload: ['must be object'] },
    message: 'The payload does not match the schema of price-change.',
  })
})

t.test('400 fanout_too_many_stores above max_stores', async (t) => {
  const f = await fanoutFixture(t, { settings: { max_stores: 2 } })
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s1', 'org_s2', 'org_s3'] })
  t.equal(res.statusCode, 400)
  t.same(res.json(), {
    error: 'fanout_too_many_stores',
    operation_type: 'price-change',
    max_stores: 2,
    store_count: 3,
    message: 'A dispatch targets at most 2 stores; this one lists 3.',
  })
  t.equal(laneRequestCount(f.lanes), 0)
})

t.test('413 payload_too_large above max_payload_bytes, before any lane is contacted', async (t) => {
  const f = await fanoutFixture(t, { settings: { max_payload_bytes: 40 } })
  const res = await f.preview({ operation_type: 'price-change', payload: { product_code: '4011', retail_price: '0.79', x: 'y'.repeat(40) }, store_org_ids: ['org_s1'] })
  t.equal(res.statusCode, 413)
  t.same(res.json(), {
    error: 'payload_too_large',
    max_payload_bytes: 40,
    message: 'The payload is 92 bytes; this operation accepts at most 40.',
  })
  t.equal(laneRequestCount(f.lanes), 0)
})

t.test('422 fanout_store_out_of_scope lists every offending store and dispatches nothing', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({
    operation_type: 'price-change',
    payload: validPayload,
    store_org_ids: ['org_s1', 'org_x1', 'org_missing', 'org_inactive', 'org_nolane', '127.0.0.1:6379', 'org_e1'],
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'fanout_store_out_of_scope',
    operation_type: 'price-change',
    offending_stores: ['org_x1', 'org_missing', 'org_inactive', 'org_nolane', '127.0.0.1:6379'],
    message: '5 of the stores are outside the caller\'s scope or have no active install; nothing was dispatched.',
  })
  t.equal(laneRequestCount(f.lanes), 0)
})

t.test('one offending store is counted in the singular ("1 of the stores is outside…")', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_s1', 'org_x1'] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'fanout_store_out_of_scope',
    operation_type: 'price-change',
    offending_stores: ['org_x1'],
    message: '1 of the stores is outside the caller\'s scope or has no active install; nothing was dispatched.',
  })
})

t.test('a child organization cannot reach its parent\'s stores', async (t) => {
  const f = await fanoutFixture(t)
  const res = await f.preview({ operation_type: 'price-change', payload: validPayload, store_org_ids: ['org_e1', 'org_s1'] }, 'org_east')
  t.equal(res.statusCode, 422)
  t.same(res.json().offending_stores, ['org_s1'])
})

t.test('422 validation_failed when the body is not {operation_type, payload, store_org_ids}', async (t) => {
  const f = await fanoutFixture(t)
  const cases: Array<[unknown, string, string]> = [
    [[], 'body', 'must be a JSON object'],
    [{ payload: {}, store_org_ids: ['org_s1'] }, 'operation_type', 'is required'],
    [{ operation_type: 7, payload: {}, store_org_ids: ['org_s1'] }, 'operation_type', 'must be a non-empty string'],
    [{ operation_type: 'price-change', store_org_ids: ['org_s1'] }, 'payload', 'is required'],
    [{ operation_type: 'price-change', payload: {} }, 'store_org_ids', 'is required'],
    [{ operation_type: 'price-change', payload: {}, store_org_ids: 'org_s1' }, 'store_org_ids', 'must be an array'],
    [{ operation_type: 'price-change', payload: {}, store_org_ids: [] }, 'store_org_ids', 'must list at least one store'],
    [{ operation_type: 'price-change', payload: {}, store_org_ids: [1] }, 'store_org_ids', 'must hold only strings'],
    [{ operation_type: 'price-change', payload: {}, store_org_ids: ['org_s1', 'org_s1'] }, 'store_org_ids', 'must not list a store twice'],
    [{ operation_type: 'price-change', payload: {}, store_org_ids: ['org_s1'], dry_run: true }, 'dry_run', 'is not allowed'],
  ]
  for (const [body, field, message] of cases) {
    const res = await f.preview(body)
    t.equal(res.statusCode, 422, JSON.stringify(body))
    t.same(res.json(), {
      error: 'validation_failed',
      errors: { [field]: [message] },
      message: `The body must be {operation_type, payload, store_org_ids}: ${field} ${message}.`,
    })
  }
  t.equal(laneRequestCount(f.lanes), 0)
})
