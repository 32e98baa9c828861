/** `count` sequential GETs of `/healthz` (no auth, no chain): some allocation in a gateway, then it can idle. */
export async function healthzTraffic (base: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await (await fetch(`${base}/healthz`)).arrayBuffer()
}
