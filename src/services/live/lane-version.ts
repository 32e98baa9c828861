import type { LaneConfig } from '../../config/types.js'
import { nextLaneKey } from '../../upstream/declared-lanes.js'
import { chooseGroup, type SplitCaller, type SplitChoice, type SplitSettings } from '../../upstream/split.js'

/** The live split's groups: the store's `lane`, and its `lane.next` (a new version of the lane software). */
export const LANE_GROUPS = ['lane', 'next'] as const

/**
 * Which version of a store's lane software a live request goes to: `lane.next` when the store has one and
 * `services.live.split` chooses `next` for the request, else the store's `lane` (no split, or no `next`: `lane`).
 */
export function laneVersion (storeId: string, lane: LaneConfig, split: SplitSettings | undefined, caller: SplitCaller): { key: string, lane: LaneConfig, group: string, choice?: SplitChoice } {
  if (lane.next === undefined || split === undefined) return { key: storeId, lane, group: 'lane' }
  const choice = chooseGroup(split, 'live', caller, 'lane')
  return choice.group === 'next' ? { key: nextLaneKey(storeId), lane: lane.next, group: 'next', choice } : { key: storeId, lane, group: 'lane', choice }
}
