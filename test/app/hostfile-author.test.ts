import t from 'tap'
import { createHash } from 'node:crypto'
import { hostfileService } from '../../src/services/hostfile/index.js'
import { baseTestConfig } from '../helpers/base-config.js'
import { buildServiceModulesApp, TEST_ORG_HEADER } from '../helpers/service-modules-app.js'

async function build (t: { teardown (fn: () => unknown): void }, maxRecords = 5) {
  const { app } = await buildServiceModulesApp(baseTestConfig({
    organizations: [{ id: 'org_hq', name: 'HQ', stores: [] }],
    services: { hostfile: { prefix: '/v1/hostfile', envelope: 'exchange', policies: [], routes: { author: [] }, max_records: maxRecords } },
  }), [hostfileService])
  t.teardown(() => app.close())
  return app
}

function author (app: Awaited<ReturnType<typeof build>>, payload: unknown) {
  return app.inject({
    method: 'POST',
    url: '/v1/hostfile/files/author',
    headers: { [TEST_ORG_HEADER]: 'org_hq', 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  })
}

t.test('200 with the ordered file, counts and checksum', async (t) => {
  const app = await build(t)
  const res = await author(app, {
    file_name: 'store-0001.hst',
    records: [
      { record_type: 'ProdRetail', action_code: 'C', product_code: '012345678905', retail_price: '3.49' },
      { record_type: 'Vendor', action_code: 'A', vendor_code: 'ACME', name: 'Acme Foods' },
      { record_type: 'VendorItem', action_code: 'A', vendor_code: 'ACME', product_code: '012345678905', vendor_item_code: 'AC-1', case_cost: '30.00', case_pack: 12 },
      { record_type: 'ProdMaint', action_code: 'A', product_code: '012345678905', description: 'Oat Cereal', department_code: '3', size: '12', unit: 'OZ' },
      { record_type: 'ProdMaint', action_code: 'D', product_code: '999' },
    ],
  })
  const content = 'Vendor|A|ACME|Acme Foods|\n' +
    'ProdMaint|A|012345678905|Oat Cereal|3|12|OZ||\n' +
    'ProdRetail|C|012345678905|3.49||\n' +
    'VendorItem|A|ACME|012345678905|AC-1|30.00|12\n' +
    'ProdMaint|D|999||||||\n'
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    file_name: 'store-0001.hst',
    format: 'pipe-delimited/v1',
    content,
    record_counts: { Vendor: 1, ProdMaint: 2, ProdRetail: 1, VendorItem: 1 },
    total_records: 5,
    checksum: createHash('sha256').update(content).digest('hex'),
  })
})

t.test('422 hostfile_record_validation_failed for the first failing row', async (t) => {
  const app = await build(t)
  const res = await author(app, {
    records: [
      { record_type: 'Department', action_code: 'A', department_code: '1', description: 'Grocery' },
      { record_type: 'ProdRetail', action_code: 'A', product_code: '4011', retail_price: '0.5' },
      { record_type: 'ProdRetail', action_code: 'A', retail_price: '1.00' },
    ],
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_record_validation_failed',
    record_type: 'ProdRetail',
    row_index: 1,
    errors: { retail_price: ['must match the format xxxxx.xx (1 to 5 digits, a dot, 2 digits)'] },
    message: 'Record 1 is invalid.',
  })
})

t.test('422 hostfile_record_validation_failed when product_code is missing', async (t) => {
  const app = await build(t)
  const res = await author(app, { records: [{ record_type: 'ProdRetail', action_code: 'A', retail_price: '1.00' }] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_record_validation_failed',
    record_type: 'ProdRetail',
    row_index: 0,
    errors: { product_code: ['is required'] },
    message: 'Record 0 is invalid.',
  })
})

t.test('422 hostfile_record_validation_failed with record_type null when a record has none', async (t) => {
  const app = await build(t)
  const res = await author(app, { records: [{ action_code: 'A', product_code: '1' }] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_record_validation_failed',
    record_type: null,
    row_index: 0,
    errors: { record_type: ['is required'] },
    message: 'Record 0 is invalid.',
  })
})

t.test('422 hostfile_record_validation_failed when action_code is missing', async (t) => {
  const app = await build(t)
  const res = await author(app, { records: [{ record_type: 'Vendor', vendor_code: 'V1', name: 'V' }] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_record_validation_failed',
    record_type: 'Vendor',
    row_index: 0,
    errors: { action_code: ['is required'] },
    message: 'Record 0 is invalid.',
  })
})

t.test('422 hostfile_unknown_record_type lists the supported types', async (t) => {
  const app = await build(t)
  const res = await author(app, {
    records: [
      { record_type: 'Department', action_code: 'A', department_code: '1', description: 'Grocery' },
      { record_type: 'ProdPromo', action_code: 'A' },
    ],
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_unknown_record_type',
    record_type: 'ProdPromo',
    supported_types: ['Department', 'Vendor', 'ProdMaint', 'ProdNonRtl', 'ProdRetail', 'ItemDeal', 'VendorItem'],
    message: 'Record 1 has record_type "ProdPromo", which is not a known host-file record type.',
  })
})

t.test('422 hostfile_unorderable_record for a retail-price delete', async (t) => {
  const app = await build(t)
  const res = await author(app, { records: [{ record_type: 'ProdRetail', action_code: 'D', product_code: '4011' }] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_unorderable_record',
    record_type: 'ProdRetail',
    action_code: 'D',
    message: 'Record 0: a ProdRetail record with action code D has no place in a host file.',
  })
})

t.test('422 hostfile_unorderable_record for an action code no tier lists', async (t) => {
  const app = await build(t)
  const res = await author(app, { records: [{ record_type: 'Vendor', action_code: 'X', vendor_code: 'V1' }] })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'hostfile_unorderable_record',
    record_type: 'Vendor',
    action_code: 'X',
    message: 'Record 0: a Vendor record with action code X has no place in a host file.',
  })
})

t.test('422 validation_failed when the body is not {records: [...]}', async (t) => {
  const app = await build(t)
  const cases: Array<[unknown, string, string]> = [
    [[], 'body', 'must be a JSON object'],
    [{}, 'records', 'is required'],
    [{ records: {} }, 'records', 'must be an array'],
    [{ records: [] }, 'records', 'must hold at least one record'],
    [{ records: ['x'] }, 'records[0]', 'must be a JSON object'],
    [{ records: [{}], store: 'x' }, 'store', 'is not allowed'],
    [{ records: [{}], file_name: '../etc/passwd' }, 'file_name', 'must be 1 to 64 letters, digits, ., _ or -, starting with a letter or digit'],
  ]
  for (const [payload, field, message] of cases) {
    const res = await author(app, payload)
    t.equal(res.statusCode, 422, JSON.stringify(payload))
    t.same(res.json(), {
      error: 'validation_failed',
      errors: { [field]: [message] },
      message: `The body must be {records: [...]}: ${field} ${message}.`,
    })
  }
})

t.test('400 hostfile_too_many_records above max_records', async (t) => {
  const app = await build(t, 2)
  const record = { record_type: 'Department', action_code: 'A', department_code: '1', description: 'Grocery' }
  const res = await author(app, { records: [record, record, record] })
  t.equal(res.statusCode, 400)
  t.same(res.json(), {
    error: 'hostfile_too_many_records',
    max_records: 2,
    record_count: 3,
    message: 'A host file holds at most 2 records; this one has 3.',
  })
})
