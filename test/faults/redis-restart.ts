// sleep: only for the phases (load running for phaseMs before, during and after the outage is what the case
// measures); conditions are waited for (until).
import { setTimeout as sleep } from 'node:timers/promises'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { ownRedis } from '../helpers/own-redis.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { until } from '../helpers/wait-for.js'
import { steadyLoad, totalByStatus } from './load.js'
import type { FaultRow } from './report.js'

export interface RedisRestartOptions {
  phaseMs: number
  concurrency: number
  /** 0: exact (every request counted in Redis); > 0: pre-counted, synchronised every this many ms. */
  syncIntervalMs: number
  onStoreError: 'open' | 'closed'
  /**
   * Longest accepted time from Redis accepting again to an answer counted in it again (default 2000 ms, the issue's
   * figure, which `npm run faults` reports). The short suite inside `npm test` allows 10× that: it checks that
   * counting resumes, on a CI box whose timing it does not control.
   */
  recoveryBoundMs?: number
}

/**
 * Redis (a server of its own) SIGKILLed and restarted while payments requests run against a limit far above the
 * load (so every 429 would be one Redis did not decide). While down: `open` serves without limit headers,
 * `closed` answers its documented 503; /readyz is 503. Recovery: from Redis accepting again to the first answer
 * counted in it again (X-RateLimit-Remaining back), which must come within 2 s.
 */
export async function redisRestart (options: RedisRestartOptions): Promise<FaultRow> {
  const failures: string[] = []
  const redis = await ownRedis()
  const prefix = `faults${Date.now().toString(36)}`
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('rate_limit_store', { driver: 'redis', redis_url: redis.url, sync_interval_ms: options.syncIntervalMs, key_prefix: prefix, on_store_error: options.onStoreError })
    .set('rate_limits.payments-per-ip.points', 10000000)
    .write()
  const gw = await spawnGateway({ config: cfg.file }).catch(async (error: unknown) => {
    await Promise.all([cfg.remove(), redis.stop()])
    throw error
  })
  try {
    const token = await fetchGatewayToken(gw.base, 'demo-status')
    // `stopping`: Redis is being killed; answers then may be counted or not (open) or 503 (closed), so only the
    // never-allowed statuses are checked until it is down.
    let phase: 'before' | 'stopping' | 'down' | 'after' = 'before'
    let backAt = 0
    let countedAgainAt = 0
    const load = steadyLoad(options.concurrency, () => ({
      kind: 'processor_config', method: 'GET', url: `${gw.base}/api/v1/ecommerce/config/processor`, headers: { authorization: `Bearer ${token}` },
    }), (answer) => {
      const counted = answer.headers['x-ratelimit-remaining'] !== undefined
      if (answer.status === 500 || answer.status === 429) failures.push(`${phase}: ${answer.status}`)
      if (phase === 'before' && (answer.status !== 200 || !counted)) failures.push(`before: ${answer.status}, counted ${counted}`)
      if (phase === 'down' && options.onStoreError === 'closed' && answer.status !== 503 && !counted) failures.push(`down (closed): ${answer.status}`)
      if (phase === 'down' && options.onStoreError === 'open' && answer.status !== 200) failures.push(`down (open): ${answer.status}`)
      if (phase === 'after' && counted && answer.status === 200 && countedAgainAt === 0) countedAgainAt = Date.now()
    })
    await sleep(options.phaseMs)
    phase = 'stopping'
    await redis.stop()
    phase = 'down'
    await sleep(options.phaseMs / 2)
    // /readyz learns of the outage at its next look at Redis: waited for, with a deadline.
    let ready: number | undefined
    const readyz = async (): Promise<boolean> => {
      ready = gw.admin === undefined ? undefined : await fetch(`${gw.admin}/readyz`).then((r) => r.status, () => -1)
      return ready === 503
    }
    if (!await until(readyz, 10_000)) failures.push(`/readyz while Redis is down: ${ready}`)
    await sleep(options.phaseMs / 2)
    await redis.start()
    backAt = Date.now()
    phase = 'after'
    const recoveryBoundMs = options.recoveryBoundMs ?? 2000
    await sleep(options.phaseMs)
    // Load keeps running until counting resumes or the bound has passed, so a slow recovery is measured, not cut off.
    await until(() => countedAgainAt !== 0, Math.max(0, recoveryBoundMs - (Date.now() - backAt)))
    const result = await load.stop()
    const recoveryMs = countedAgainAt === 0 ? undefined : countedAgainAt - backAt
    if (recoveryMs === undefined || recoveryMs > recoveryBoundMs) failures.push(`limits counted again after ${recoveryMs ?? 'never'} ms (bound ${recoveryBoundMs} ms)`)
    if (gw.child.exitCode !== null) failures.push('the gateway exited')
    return {
      case: `Redis SIGKILLed and restarted (${options.syncIntervalMs === 0 ? 'exact' : `sync_interval_ms: ${options.syncIntervalMs}`}, on_store_error: ${options.onStoreError})`,
      load: `${options.concurrency} loops, GET payments config under a limit far above the load`,
      sent: result.sent,
      byStatus: totalByStatus(result.counts),
      lost: 0,
      duplicated: 0,
      recoveryMs,
      failures: [...new Set(failures)].slice(0, 5),
      notes: `/readyz while down: ${ready}; slowest answer ${result.maxMs} ms`,
    }
  } finally {
    gw.child.kill('SIGKILL')
    await gw.exited
    await cfg.remove()
    await redis.stop()
  }
}
