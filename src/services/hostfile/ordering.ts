import type { RecordType } from './record-types.js'

/**
 * The order records are written in, as ONE declarative table of tiers. A store applies a host file top to
 * bottom, so a row may only refer to rows above it:
 * - adds and changes go parents first: departments and vendors, then products (ProdMaint, ProdNonRtl), then what
 *   hangs off a product (retail prices, deals, vendor items);
 * - deletes come after every add and change, children first (the reverse dependency order), so nothing is left
 *   pointing at a deleted parent while the file is applied.
 * Within a tier records keep the order they were submitted in (a stable sort).
 *
 * A (record_type, action_code) pair listed in no tier cannot be placed and is rejected with
 * `hostfile_unorderable_record`. ProdRetail has no delete tier on purpose: a price is removed with its product
 * (a ProdMaint `D`), and a price-only delete would leave a product on the shelf with no price.
 */
export interface OrderingTier {
  readonly name: string
  readonly recordTypes: readonly RecordType[]
  readonly actionCodes: readonly string[]
}

export const orderingTiers: readonly OrderingTier[] = [
  { name: 'parent adds and changes', recordTypes: ['Department', 'Vendor'], actionCodes: ['A', 'C'] },
  { name: 'product adds and changes', recordTypes: ['ProdMaint', 'ProdNonRtl'], actionCodes: ['A', 'C'] },
  { name: 'product child adds and changes', recordTypes: ['ProdRetail', 'ItemDeal', 'VendorItem'], actionCodes: ['A', 'C'] },
  { name: 'product child deletes', recordTypes: ['ItemDeal', 'VendorItem'], actionCodes: ['D'] },
  { name: 'product deletes', recordTypes: ['ProdMaint', 'ProdNonRtl'], actionCodes: ['D'] },
  { name: 'parent deletes', recordTypes: ['Department', 'Vendor'], actionCodes: ['D'] },
]

const tierIndex = new Map<string, number>()
orderingTiers.forEach((tier, index) => {
  for (const type of tier.recordTypes) {
    for (const action of tier.actionCodes) tierIndex.set(`${type}|${action}`, index)
  }
})

/** The tier a (record_type, action_code) pair is written in, or undefined when no tier places it. */
export function tierOf (recordType: RecordType, actionCode: string): number | undefined {
  return tierIndex.get(`${recordType}|${actionCode}`)
}

/** Action codes the table places for a record type, in tier order. */
export function actionCodesOf (recordType: RecordType): string[] {
  return orderingTiers.filter((t) => t.recordTypes.includes(recordType)).flatMap((t) => [...t.actionCodes])
}

/** Sorts items by tier, keeping submission order within a tier. */
export function orderByTier<T extends { tier: number, index: number }> (items: readonly T[]): T[] {
  return [...items].sort((a, b) => a.tier - b.tier || a.index - b.index)
}
