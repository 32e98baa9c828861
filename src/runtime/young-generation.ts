/**
 * The young generation a gateway process starts with: at least 8 MB per semi-space (V8's own start is 1 MB, and it
 * grows only while many objects survive a scavenge, which a gateway's short-lived request objects rarely do).
 *
 * Why: at one connection, a relayed GET allocates about 22 KB, and V8 shrinks an idle process's young generation
 * (its memory reducer), so a gateway that served no burst lately scavenged every ~100 requests: 195 scavenges per
 * 20,000 requests, about 1 % of requests, exactly where p99 sits. With 8 MB (which V8 grew to 16 under that load)
 * it scavenged 35 times per 20,000 and the added p99 at c=1 fell from 0.73 to 0.51–0.57 ms, below http-proxy-3's
 * 0.65 in the same rounds (docs/performance.md, "Issue 24, the eighth session"). The cost: about 14 MB more RSS
 * at idle (two 8 MB semi-spaces instead of two of 1 MB); under load V8 had grown it to 16 MB anyway.
 *
 * V8 sizes the heap once, when the process starts: a running process cannot change it (`v8.setFlagsFromString`
 * leaves the semi-spaces as they are), so this is a node option of the launch. `npm start` and the Docker image
 * pass it, the cluster primary gives it to every worker it forks, and the bench starts its gateways with it. Started
 * another way (`npx lanegate start`, a process manager), set `NODE_OPTIONS=--min-semi-space-size=8`.
 */
export const YOUNG_GENERATION_FLAG = '--min-semi-space-size=8'

/** `--min-semi-space-size`, `--max_semi_space_size=…`: the operator sized the young generation. */
const SIZES_YOUNG_GENERATION = /^--(?:min|max)[-_]semi[-_]space[-_]size(?:=|$)/

/**
 * The node options for a process the gateway starts (a cluster worker): `execArgv` with `YOUNG_GENERATION_FLAG`
 * first, unless the operator already sized the young generation, in `execArgv` or in `NODE_OPTIONS` (theirs wins:
 * a `--max-semi-space-size` below 8 beside our minimum would not be what they asked).
 */
export function withYoungGeneration (execArgv: readonly string[], nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)]
  if (given.some((arg) => SIZES_YOUNG_GENERATION.test(arg))) return [...execArgv]
  return [YOUNG_GENERATION_FLAG, ...execArgv]
}
