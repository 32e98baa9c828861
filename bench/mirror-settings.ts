/** How late the slow lane answers each mirror copy (issue 41: "a mirror that takes 2 s per request"). */
export const MIRROR_DELAY_MS = 2000

/**
 * The mirrored route's `mirror`: 10 % of its requests, at most the default 16 copies in flight. At c=1 the gateway
 * answers several hundred GETs a second, so 10 % offers tens of copies a second while 16 copies of 2 s each let
 * through 8: most are dropped, and counted, as an overloaded mirror's would be.
 */
export const BENCH_MIRROR = { percent: 10, maxInFlight: 16 } as const

/** The proxy-mirror scenario's mirrored GET: read_price's chain on a route of its own, then a copy to the slow lane. */
export const GATEWAY_MIRRORED_PATH = '/legacy/pricing/mirrored/000123'
