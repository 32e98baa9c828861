/**
 * Every host-file record type the author endpoint knows, with its fields, in ONE declarative table. The order of
 * `fields` is the order of the columns in the rendered file (after `TYPE|ACTION`), so adding a field at the end
 * keeps older readers working. `docs/data-exchange.md` (Host-file authoring) lists the same table in prose.
 *
 * Field rules:
 * - `key` fields identify the row: required on every action, and the only fields a delete (`D`) may carry;
 * - `required` fields must be present on adds (`A`) and changes (`C`);
 * - every value is checked against its `kind`; text may not hold `|`, CR or LF (they would break the file).
 */

/** How a field's value is written and checked. */
export type FieldKind =
  /** A string matching `pattern`. */
  | { type: 'code', pattern: RegExp, hint: string }
  /** Free text, 1..maxLength characters, no `|`, CR or LF. */
  | { type: 'text', maxLength: number }
  /** A price `xxxxx.xx`: 1 to 5 digits, a dot, 2 digits (a string, so no float rounding). */
  | { type: 'money' }
  /** A calendar date `YYYY-MM-DD`. */
  | { type: 'date' }
  /** A JSON integer in [min, max]. */
  | { type: 'integer', min: number, max: number }
  /** A JSON boolean, written `Y` or `N`. */
  | { type: 'flag' }
  /** One of a fixed list of strings. */
  | { type: 'enum', values: readonly string[] }

export interface FieldSpec {
  readonly name: string
  readonly kind: FieldKind
  /** Identifies the row; required on every action. */
  readonly key?: boolean
  /** Required on adds and changes. */
  readonly required?: boolean
  readonly description: string
}

/** A rule between two fields of one record. */
export interface CrossFieldRule {
  /** `field` must not be earlier than `other` (both dates). */
  readonly rule: 'not_before'
  readonly field: string
  readonly other: string
}

export interface RecordTypeSpec {
  readonly description: string
  readonly fields: readonly FieldSpec[]
  readonly rules?: readonly CrossFieldRule[]
}

const productCode: FieldKind = { type: 'code', pattern: /^\d{1,14}$/, hint: '1 to 14 digits (UPC, EAN or PLU)' }
const departmentCode: FieldKind = { type: 'code', pattern: /^\d{1,4}$/, hint: '1 to 4 digits' }
const vendorCode: FieldKind = { type: 'code', pattern: /^[A-Z0-9]{1,10}$/, hint: '1 to 10 upper-case letters or digits' }
const units = ['EA', 'LB', 'OZ', 'KG', 'G', 'CT', 'L', 'ML', 'GAL'] as const

export const recordTypes = {
  Department: {
    description: 'A department products are filed under.',
    fields: [
      { name: 'department_code', kind: departmentCode, key: true, description: 'Department number.' },
      { name: 'description', kind: { type: 'text', maxLength: 30 }, required: true, description: 'Department name.' },
      { name: 'taxable', kind: { type: 'flag' }, description: 'Default taxability of the department\'s products.' },
    ],
  },
  Vendor: {
    description: 'A supplier products are bought from.',
    fields: [
      { name: 'vendor_code', kind: vendorCode, key: true, description: 'Vendor identifier.' },
      { name: 'name', kind: { type: 'text', maxLength: 40 }, required: true, description: 'Vendor name.' },
      { name: 'phone', kind: { type: 'code', pattern: /^[0-9+() -]{7,20}$/, hint: '7 to 20 digits, spaces, +, ( or )' }, description: 'Order desk phone.' },
    ],
  },
  ProdMaint: {
    description: 'Product maintenance: a retail product\'s master data.',
    fields: [
      { name: 'product_code', kind: productCode, key: true, description: 'Product code.' },
      { name: 'description', kind: { type: 'text', maxLength: 40 }, required: true, description: 'Receipt description.' },
      { name: 'department_code', kind: departmentCode, required: true, description: 'Department the product is filed under.' },
      { name: 'size', kind: { type: 'text', maxLength: 10 }, description: 'Package size, e.g. `12`.' },
      { name: 'unit', kind: { type: 'enum', values: units }, description: 'Unit of the size.' },
      { name: 'pack_qty', kind: { type: 'integer', min: 1, max: 9999 }, description: 'Units per selling pack.' },
      { name: 'taxable', kind: { type: 'flag' }, description: 'Whether the product is taxed.' },
    ],
  },
  ProdNonRtl: {
    description: 'A non-retail product (supplies, store use): master data without a shelf price.',
    fields: [
      { name: 'product_code', kind: productCode, key: true, description: 'Product code.' },
      { name: 'description', kind: { type: 'text', maxLength: 40 }, required: true, description: 'Description.' },
      { name: 'department_code', kind: departmentCode, required: true, description: 'Department the product is filed under.' },
      { name: 'unit_cost', kind: { type: 'money' }, description: 'Cost per unit, xxxxx.xx.' },
    ],
  },
  ProdRetail: {
    description: 'A product\'s retail (shelf) price.',
    fields: [
      { name: 'product_code', kind: productCode, key: true, description: 'Product code.' },
      { name: 'retail_price', kind: { type: 'money' }, required: true, description: 'Shelf price, xxxxx.xx.' },
      { name: 'price_qty', kind: { type: 'integer', min: 1, max: 99 }, description: 'Quantity the price buys (e.g. 3 for 5.00); default 1.' },
      { name: 'effective_date', kind: { type: 'date' }, description: 'First day the price applies.' },
    ],
  },
  ItemDeal: {
    description: 'A time-limited deal price on a product.',
    fields: [
      { name: 'deal_code', kind: { type: 'code', pattern: /^[A-Z0-9]{1,12}$/, hint: '1 to 12 upper-case letters or digits' }, key: true, description: 'Deal identifier.' },
      { name: 'product_code', kind: productCode, key: true, description: 'Product the deal applies to.' },
      { name: 'deal_price', kind: { type: 'money' }, required: true, description: 'Deal price, xxxxx.xx.' },
      { name: 'start_date', kind: { type: 'date' }, required: true, description: 'First day of the deal.' },
      { name: 'end_date', kind: { type: 'date' }, required: true, description: 'Last day of the deal.' },
      { name: 'deal_qty', kind: { type: 'integer', min: 1, max: 99 }, description: 'Quantity the deal price buys; default 1.' },
    ],
    rules: [{ rule: 'not_before', field: 'end_date', other: 'start_date' }],
  },
  VendorItem: {
    description: 'How a vendor sells a product: its order code and case cost.',
    fields: [
      { name: 'vendor_code', kind: vendorCode, key: true, description: 'Vendor identifier.' },
      { name: 'product_code', kind: productCode, key: true, description: 'Product code.' },
      { name: 'vendor_item_code', kind: { type: 'code', pattern: /^[A-Za-z0-9-]{1,20}$/, hint: '1 to 20 letters, digits or -' }, required: true, description: 'The vendor\'s order code.' },
      { name: 'case_cost', kind: { type: 'money' }, required: true, description: 'Cost of one case, xxxxx.xx.' },
      { name: 'case_pack', kind: { type: 'integer', min: 1, max: 9999 }, description: 'Units per case.' },
    ],
  },
} as const satisfies Record<string, RecordTypeSpec>

export type RecordType = keyof typeof recordTypes

/** Record type names in the table's order (the order `supported_types` lists them). */
export const supportedRecordTypes = Object.keys(recordTypes) as RecordType[]

export function isRecordType (value: unknown): value is RecordType {
  return typeof value === 'string' && Object.hasOwn(recordTypes, value)
}

export function recordTypeSpec (type: RecordType): RecordTypeSpec {
  return recordTypes[type]
}
