import t from 'tap'
import { createHash } from 'node:crypto'
import { authorHostFile } from '../../src/services/hostfile/author-file.js'
import { orderingTiers, actionCodesOf, tierOf } from '../../src/services/hostfile/ordering.js'
import { recordTypes, supportedRecordTypes } from '../../src/services/hostfile/record-types.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'

const opts = { maxRecords: 100 }

const dept = (code: string, action = 'A') => action === 'D'
  ? { record_type: 'Department', action_code: 'D', department_code: code }
  : { record_type: 'Department', action_code: action, department_code: code, description: `Dept ${code}` }
const vendor = (code: string, action = 'A') => action === 'D'
  ? { record_type: 'Vendor', action_code: 'D', vendor_code: code }
  : { record_type: 'Vendor', action_code: action, vendor_code: code, name: `Vendor ${code}` }
const prod = (code: string, action = 'A') => action === 'D'
  ? { record_type: 'ProdMaint', action_code: 'D', product_code: code }
  : { record_type: 'ProdMaint', action_code: action, product_code: code, description: `Item ${code}`, department_code: '10' }
const nonRtl = (code: string, action = 'A') => action === 'D'
  ? { record_type: 'ProdNonRtl', action_code: 'D', product_code: code }
  : { record_type: 'ProdNonRtl', action_code: action, product_code: code, description: `Supply ${code}`, department_code: '90' }
const price = (code: string, action = 'A') => ({ record_type: 'ProdRetail', action_code: action, product_code: code, retail_price: '1.99' })
const deal = (code: string, action = 'A') => action === 'D'
  ? { record_type: 'ItemDeal', action_code: 'D', deal_code: 'D1', product_code: code }
  : { record_type: 'ItemDeal', action_code: action, deal_code: 'D1', product_code: code, deal_price: '0.99', start_date: '2026-03-01', end_date: '2026-03-07' }
const vitem = (code: string, action = 'A') => action === 'D'
  ? { record_type: 'VendorItem', action_code: 'D', vendor_code: 'V1', product_code: code }
  : { record_type: 'VendorItem', action_code: action, vendor_code: 'V1', product_code: code, vendor_item_code: `VI-${code}`, case_cost: '12.00' }

/** The `TYPE|ACTION|first key` of each line, to compare orders compactly. */
function order (records: object[]): string[] {
  return authorHostFile({ records }, opts).content.trimEnd().split('\n').map((line) => line.split('|').slice(0, 3).join('|'))
}

function thrown (fn: () => unknown): GatewayError {
  try {
    fn()
  } catch (error) {
    if (error instanceof GatewayError) return error
    throw error
  }
  throw new Error('expected a GatewayError')
}

t.test('departments and vendors are written before products', async (t) => {
  t.same(order([prod('1'), nonRtl('2'), vendor('V1'), dept('10')]), [
    'Vendor|A|V1', 'Department|A|10', 'ProdMaint|A|1', 'ProdNonRtl|A|2',
  ])
})

t.test('products are written before retail prices, deals and vendor items', async (t) => {
  t.same(order([price('1'), deal('1'), vitem('1'), prod('1'), nonRtl('2')]), [
    'ProdMaint|A|1', 'ProdNonRtl|A|2', 'ProdRetail|A|1', 'ItemDeal|A|D1', 'VendorItem|A|V1',
  ])
})

t.test('deletes come after every add and change', async (t) => {
  t.same(order([dept('20', 'D'), price('1', 'C'), prod('1', 'C')]), [
    'ProdMaint|C|1', 'ProdRetail|C|1', 'Department|D|20',
  ])
})

t.test('deletes run in reverse dependency order: children, then products, then parents', async (t) => {
  t.same(order([vendor('V9', 'D'), dept('20', 'D'), prod('5', 'D'), nonRtl('6', 'D'), deal('5', 'D'), vitem('5', 'D')]), [
    'ItemDeal|D|D1', 'VendorItem|D|V1', 'ProdMaint|D|5', 'ProdNonRtl|D|6', 'Vendor|D|V9', 'Department|D|20',
  ])
})

t.test('records keep their submitted order within a tier', async (t) => {
  t.same(order([prod('3'), prod('1'), nonRtl('2'), prod('2', 'C')]), [
    'ProdMaint|A|3', 'ProdMaint|A|1', 'ProdNonRtl|A|2', 'ProdMaint|C|2',
  ])
})

t.test('adds and changes of one tier are interleaved in submission order', async (t) => {
  t.same(order([dept('2', 'C'), dept('1', 'A'), vendor('V1', 'C')]), [
    'Department|C|2', 'Department|A|1', 'Vendor|C|V1',
  ])
})

t.test('the ordering table places every record type as an add, and nothing twice', async (t) => {
  const seen = new Set<string>()
  for (const tier of orderingTiers) {
    for (const type of tier.recordTypes) {
      for (const action of tier.actionCodes) {
        t.notOk(seen.has(`${type}|${action}`), `${type} ${action} placed once`)
        seen.add(`${type}|${action}`)
      }
    }
  }
  for (const type of supportedRecordTypes) t.ok(tierOf(type, 'A') !== undefined, `${type} A placed`)
  t.same(actionCodesOf('ProdRetail'), ['A', 'C'])
  t.same(actionCodesOf('ProdMaint'), ['A', 'C', 'D'])
})

t.test('the file is one pipe-delimited line per record, fields in declared order, with counts and checksum', async (t) => {
  const result = authorHostFile({
    records: [
      { record_type: 'ProdRetail', action_code: 'A', product_code: '4011', retail_price: '0.69', price_qty: 3, effective_date: '2026-04-01' },
      { record_type: 'ProdMaint', action_code: 'A', product_code: '4011', description: 'Bananas', department_code: '12', unit: 'LB', taxable: false },
      { record_type: 'Department', action_code: 'A', department_code: '12', description: 'Produce', taxable: false },
    ],
  }, opts)
  const content = 'Department|A|12|Produce|N\n' +
    'ProdMaint|A|4011|Bananas|12||LB||N\n' +
    'ProdRetail|A|4011|0.69|3|2026-04-01\n'
  const checksum = createHash('sha256').update(content).digest('hex')
  t.same(result, {
    file_name: `hostfile-${checksum.slice(0, 16)}.txt`,
    format: 'pipe-delimited/v1',
    content,
    record_counts: { Department: 1, ProdMaint: 1, ProdRetail: 1 },
    total_records: 3,
    checksum,
  })
})

t.test('a given file_name is kept', async (t) => {
  const result = authorHostFile({ records: [dept('1')], file_name: 'store-0042.hst' }, opts)
  t.equal(result.file_name, 'store-0042.hst')
})

t.test('every record type has a description on each field and at least one key', async (t) => {
  for (const [name, spec] of Object.entries(recordTypes)) {
    t.ok(spec.fields.some((f) => 'key' in f && f.key), `${name} has a key`)
    for (const field of spec.fields) t.ok(field.description.length > 0, `${name}.${field.name} described`)
  }
})

t.test('a row with several problems reports them all, and only the first failing row is reported', async (t) => {
  const error = thrown(() => authorHostFile({
    records: [dept('1'), { record_type: 'ProdRetail', action_code: 'A', retail_price: '1.5', colour: 'red' }, { record_type: 'Nope' }],
  }, opts))
  t.equal(error.code, 'hostfile_record_validation_failed')
  t.same(error.fields, {
    record_type: 'ProdRetail',
    row_index: 1,
    errors: {
      colour: ['is not a field of ProdRetail'],
      product_code: ['is required'],
      retail_price: ['must match the format xxxxx.xx (1 to 5 digits, a dot, 2 digits)'],
    },
  })
})

t.test('field kinds: money, date, integer, flag, enum, code and text are each checked', async (t) => {
  const cases: Array<[object, Record<string, string[]>]> = [
    [{ ...price('1'), retail_price: '123456.00' }, { retail_price: ['must match the format xxxxx.xx (1 to 5 digits, a dot, 2 digits)'] }],
    [{ ...price('1'), retail_price: 1.99 }, { retail_price: ['must be a string in the format xxxxx.xx'] }],
    [{ ...price('1'), effective_date: '2026-02-30' }, { effective_date: ['must be a calendar date in the format YYYY-MM-DD'] }],
    [{ ...price('1'), price_qty: 1.5 }, { price_qty: ['must be an integer'] }],
    [{ ...price('1'), price_qty: 100 }, { price_qty: ['must be between 1 and 99'] }],
    [{ ...dept('1'), taxable: 'Y' }, { taxable: ['must be true or false'] }],
    [{ ...prod('1'), unit: 'BOX' }, { unit: ['must be one of: EA, LB, OZ, KG, G, CT, L, ML, GAL'] }],
    [{ ...prod('ABC') }, { product_code: ['must be 1 to 14 digits (UPC, EAN or PLU)'] }],
    [{ ...prod('1'), description: 'a|b' }, { description: ['must not contain |, CR or LF'] }],
    [{ ...prod('1'), description: '' }, { description: ['must be 1 to 40 characters'] }],
    [{ ...deal('1'), end_date: '2026-02-28' }, { end_date: ['must not be before start_date'] }],
    [{ ...prod('1', 'D'), description: 'x' }, { description: ['is not allowed on a delete (D) record, which carries only its key fields'] }],
    [{ ...vitem('1'), vendor_code: null }, { vendor_code: ['is required'] }],
  ]
  for (const [record, errors] of cases) {
    const error = thrown(() => authorHostFile({ records: [record] }, opts))
    t.same({ code: error.code, errors: error.fields.errors }, { code: 'hostfile_record_validation_failed', errors }, JSON.stringify(record))
  }
})

t.test('a delete needs only its key fields; null optional fields count as absent', async (t) => {
  const result = authorHostFile({ records: [prod('7', 'D'), { ...dept('1'), taxable: null }] }, opts)
  t.equal(result.content, 'Department|A|1|Dept 1|\nProdMaint|D|7||||||\n')
})
