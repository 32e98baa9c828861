/**
 * The gateway runs without V8's memory reducer: `--no-memory-reducer`.
 *
 * Why: the memory reducer's "reduce memory" GCs after an idle spell drop the hidden classes optimized code checks
 * (V8 keeps them through ordinary GCs), deoptimizing the whole request path at once; what it gave back was a few MB
 * of heap (docs/performance.md, "The tricks in the code").
 *
 * V8 creates the memory reducer when the heap is set up, so this is a node option of the launch (node refuses it
 * in `NODE_OPTIONS`): `npm start`, the Docker image, the cluster primary (for every worker) and the bench pass it.
 * Started another way, put it on node's command line; `--memory-reducer` there keeps V8's default.
 */
export const MEMORY_REDUCER_FLAG = '--no-memory-reducer'

/** `--memory-reducer`, `--no-memory-reducer`, `--no_memory_reducer`: the operator chose. */
export const SETS_MEMORY_REDUCER = /^--(?:no[-_])?memory[-_]reducer$/
