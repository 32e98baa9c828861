/**
 * The young generation a gateway process starts with: at least 8 MB per semi-space (V8's own start is 1 MB).
 *
 * Why: V8 shrinks the young generation at the first scavenge after an idle spell (the allocation rate it measured
 * is under 1 KB/ms), to twice what is in use or to its initial size, whichever is larger, and grows it back only as
 * the bytes surviving scavenges add up to its size, which a gateway's short-lived request objects rarely do. A
 * relayed GET allocates about 22 KB, so after an idle spell the gateway scavenged every ~100 requests: on about 1 %
 * of them, exactly where p99 sits at one connection, and p99 − p50 came out at one scavenge pause. With 8 MB it
 * scavenges on about 0.3 % of requests, and its GC time at c=1 halves (56.7 against 118.3 ms per 20,000 requests;
 * by instructions no dearer: docs/performance.md, "Issue 24, the eighth session" and "the ninth session"). The
 * cost: about 14 MB more RSS at idle, and each scavenge is longer, paid by the few requests that meet one: 0.87–0.99
 * ms in the quiet sittings since `request.gw` keeps one hidden class, the longest of a round 2–4 ms (0.9–1.7 ms
 * before that fix; 0.5–0.6 ms without the floor; docs/performance.md, "the tenth session").
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
