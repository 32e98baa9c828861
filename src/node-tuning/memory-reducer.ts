/**
 * The gateway runs without V8's memory reducer: `--no-memory-reducer`.
 *
 * Why: the memory reducer notices a process that has stopped allocating (8 s after a full GC, its allocation rate
 * low) and runs up to three full GCs that shrink the heap. An ordinary full GC keeps a hidden class (map) that
 * optimized code checks alive for two more GCs after its last object died (`--retain-maps-for-n-gc`); a "reduce
 * memory" GC does not (V8's mark-compact.cc, `RetainMaps`), so it deoptimizes every piece of code that checked one
 * of them: in the gateway, 121–143 functions at once, the whole request path
 * (node's http server and streams, fastify's routing and hooks, the policy chain, the relay, undici). The requests
 * after an idle spell then run unoptimized until TurboFan has compiled it all again: in the bench's c=1 rounds that
 * followed such a GC, 167–183 µs of CPU per request against 153–164 and p99 1.0–1.4 ms against 0.56–0.75
 * (docs/performance.md, "Issue 24, the eleventh session"). What the reducer gave back was 4–5 MB of heap (47.7 →
 * 41.9 MB committed): the ordinary GCs still run whenever the gateway allocates, so without it only that much stays
 * committed through an idle spell.
 *
 * V8 creates the memory reducer when the heap is set up, so this is a node option of the launch (node refuses it
 * in `NODE_OPTIONS`): `npm start`, the Docker image, the cluster primary (for every worker) and the bench pass it.
 * Started another way, put it on node's command line; `--memory-reducer` there keeps V8's default.
 */
export const MEMORY_REDUCER_FLAG = '--no-memory-reducer'

/** `--memory-reducer`, `--no-memory-reducer`, `--no_memory_reducer`: the operator chose. */
export const SETS_MEMORY_REDUCER = /^--(?:no[-_])?memory[-_]reducer$/
