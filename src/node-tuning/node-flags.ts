import { MEMORY_REDUCER_FLAG, SETS_MEMORY_REDUCER } from './memory-reducer.js'
import { SIZES_YOUNG_GENERATION, YOUNG_GENERATION_FLAG } from './young-generation.js'

/**
 * The node options a gateway process starts with, each for its own reason (young-generation.ts,
 * memory-reducer.ts): `npm start`, the Docker image, the cluster's workers and the bench's gateways get them all.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = [YOUNG_GENERATION_FLAG, MEMORY_REDUCER_FLAG]

/** Each flag beside what an operator's own option on the same matter looks like. */
const OVERRIDDEN_BY: ReadonlyArray<readonly [string, RegExp]> = [
  [YOUNG_GENERATION_FLAG, SIZES_YOUNG_GENERATION],
  [MEMORY_REDUCER_FLAG, SETS_MEMORY_REDUCER],
]

/**
 * The node options for a process the gateway starts (a cluster worker): `execArgv` with the gateway's flags first,
 * but none on a matter the operator already settled, in `execArgv` or in `NODE_OPTIONS` (theirs wins: a
 * `--max-semi-space-size` below 8 beside our minimum would not be what they asked).
 */
export function withGatewayNodeFlags (execArgv: readonly string[], nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)]
  const ours = OVERRIDDEN_BY.filter(([, theirs]) => !given.some((arg) => theirs.test(arg))).map(([flag]) => flag)
  return [...ours, ...execArgv]
}
