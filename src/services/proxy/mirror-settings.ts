import { Type, type Static } from '@sinclair/typebox'
import { GROUP_NAME } from '../split-settings.js'
import type { ServiceSettingProblem } from '../service-module.js'

/** `mirror:` of a proxy block or route: a copy of some requests goes to another target group, its answer discarded. */
export const MirrorSchema = Type.Object({
  upstream: Type.String({ pattern: GROUP_NAME, description: 'The group of `upstreams` the copies go to (a request the split sent to that group is not copied).' }),
  percent: Type.Number({ minimum: 0, maximum: 100, description: 'Share of the requests copied, in percent (each request drawn at random).' }),
  max_body_bytes: Type.Integer({ minimum: 0, maximum: 67108864, default: 65536, description: 'A request whose body is larger is not copied (counted as dropped): the copy is held in memory until the body is complete.' }),
  max_in_flight: Type.Integer({ minimum: 1, maximum: 100000, default: 16, description: 'Copies being read or sent at once per process at most; a request beyond it is not copied (counted as dropped).' }),
}, { additionalProperties: false, description: 'Mirror: a copy of `percent` % of the requests goes to the group `upstream` once its body is known; its answer is discarded and its failure or slowness never reaches the caller.' })

export type MirrorSettings = Static<typeof MirrorSchema>

/** A mirror copies to a group of the block's `upstreams` (`at` is its path below the block). */
export function mirrorProblems (mirror: MirrorSettings, groups: readonly string[] | undefined, at: string): ServiceSettingProblem[] {
  if (groups === undefined) return [{ path: at, message: 'copies to another target group: give the block upstreams (named groups) instead of upstream' }]
  if (!groups.includes(mirror.upstream)) return [{ path: `${at}.upstream`, message: `no upstream group "${mirror.upstream}" (groups: ${groups.join(', ')})` }]
  return []
}
