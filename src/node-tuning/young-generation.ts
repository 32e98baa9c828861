/**
 * The young generation a gateway process starts with: at least 8 MB per semi-space (V8's own start is 1 MB).
 *
 * Why: V8 shrinks the young generation after an idle spell, and a gateway's short-lived request objects rarely grow
 * it back, so it scavenged on ~1 % of requests, where the c=1 p99 sits; 8 MB halves the GC time at c=1 for ~14 MB
 * of RSS (docs/performance.md, "The tricks in the code").
 *
 * V8 sizes the heap once, when the process starts: a running process cannot change it (`v8.setFlagsFromString`
 * leaves the semi-spaces as they are), so this is a node option of the launch. `npm start` and the Docker image
 * pass it, the cluster primary gives it to every worker it forks, and the bench starts its gateways with it
 * (node-flags.ts: with the memory reducer off). Started
 * another way (`npx lanegate start`, a process manager), set `NODE_OPTIONS=--min-semi-space-size=8`.
 */
export const YOUNG_GENERATION_FLAG = '--min-semi-space-size=8'

/** `--min-semi-space-size`, `--max_semi_space_size=…`: the operator sized the young generation. */
export const SIZES_YOUNG_GENERATION = /^--(?:min|max)[-_]semi[-_]space[-_]size(?:=|$)/
