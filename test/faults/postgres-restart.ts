// sleep: only for the phases (load running for phaseMs before, during and after the outage is what the case
// measures).
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { fetchGatewayToken } from '../helpers/fetch-token.js'
import { ownPostgres } from '../helpers/own-postgres.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { steadyLoad, totalByStatus } from './load.js'
import type { FaultRow } from './report.js'

export interface PostgresRestartOptions {
  /** Load before the stop, while down, and after the start (ms each). */
  phaseMs: number
  concurrency: number
}

interface KeyState { client: number, key: string, id?: string, done: boolean }

/**
 * PostgreSQL (a server of its own) stopped and started while clients create payment intents with
 * Idempotency-Keys, each client retrying a key until it gets 201 (as a client should on 503 + Retry-After).
 * Lost: an intent acknowledged with 201 that cannot be read afterwards. Duplicated: more than one intent row for
 * one key. Every answer must be 201, a replay, 503 `store_unavailable` with Retry-After (down), or 409 (the key
 * of a failed request still held, for a moment after the restart); never a 500 and never slower than
 * request_timeout_ms.
 */
export async function postgresRestart (options: PostgresRestartOptions): Promise<FaultRow> {
  const failures: string[] = []
  const server = await ownPostgres()
  const cfg = await gatewayFixture().set('server.data_dir', './data')
    .set('storage', { driver: 'postgres', postgres_url: server.url })
    .set('rate_limits.payments-per-ip.points', 10000000)
    .write()
  const gw = await spawnGateway({ config: cfg.file }).catch(async (error: unknown) => {
    await Promise.all([cfg.remove(), server.remove()])
    throw error
  })
  try {
    const clients = [
      { token: await fetchGatewayToken(gw.base, 'demo-checkout'), org: 'org_hq_demo' },
      { token: await fetchGatewayToken(gw.base, 'demo-other'), org: 'org_other_hq' },
    ]
    const run = `f${Date.now().toString(36)}`
    const current: KeyState[] = []
    const keys: KeyState[] = []
    let serial = 0
    let startedAt = 0
    let firstCreatedAfterStart = 0
    let slow = 0
    const load = steadyLoad(options.concurrency, (loop) => {
      let state = current[loop]
      if (state === undefined || state.done) {
        state = { client: loop % 2, key: `${run}-${serial++}`, done: false }
        current[loop] = state
        keys.push(state)
      }
      const client = clients[state.client] as { token: string, org: string }
      return {
        kind: 'create',
        method: 'POST',
        url: `${gw.base}/api/v1/ecommerce/payment-intents`,
        headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json', 'idempotency-key': state.key },
        body: JSON.stringify({ organization_id: client.org, amount: 1999, currency: 'usd', description: state.key }),
      }
    }, (answer, sent) => {
      const state = keys.find((k) => k.key === sent.headers?.['idempotency-key'])
      if (answer.ms > 30_000) slow += 1
      if (answer.status === 201 && state !== undefined) {
        state.id = (JSON.parse(answer.body) as { data: { id: string } }).data.id
        state.done = true
        if (startedAt > 0 && firstCreatedAfterStart === 0) firstCreatedAfterStart = Date.now()
      } else if (answer.status === 503) {
        if (answer.headers['retry-after'] !== '2') failures.push('a 503 without Retry-After: 2')
      } else if (answer.status !== 409) {
        failures.push(`unexpected ${answer.status}: ${answer.body.slice(0, 120)}`)
      }
    })
    await sleep(options.phaseMs)
    await server.stop('fast')
    await sleep(options.phaseMs)
    await server.start()
    startedAt = Date.now()
    await sleep(options.phaseMs)
    // Let every key in progress finish (each loop retries its key until 201).
    const result = await load.stop()
    if (slow > 0) failures.push(`${slow} answers slower than request_timeout_ms`)
    if (gw.child.exitCode !== null) {
      const last = gw.output().split('\n').filter((l) => /"level":(50|60)/.test(l)).slice(-3).join(' ')
      throw new Error(`the gateway exited (${gw.child.exitCode}) during the case: ${last} ${gw.errors().slice(-500)}`)
    }

    // Lost: acknowledged but not readable. Duplicated: one key, several rows.
    let lost = 0
    for (const state of keys.filter((k) => k.id !== undefined)) {
      const client = clients[state.client] as { token: string }
      const res = await fetch(`${gw.base}/api/v1/ecommerce/payment-intents/${state.id as string}`, { headers: { authorization: `Bearer ${client.token}` } })
      if (res.status !== 200) lost += 1
    }
    const db = new pg.Client({ connectionString: server.url })
    await db.connect()
    const rows = await db.query<{ description: string, n: string }>(
      `SELECT description, count(*) AS n FROM payment_intents WHERE description LIKE $1 GROUP BY description HAVING count(*) > 1`, [`${run}-%`])
    await db.end()
    const duplicated = rows.rows.reduce((sum, r) => sum + Number(r.n) - 1, 0)
    if (lost > 0) failures.push(`${lost} acknowledged intents lost`)
    if (duplicated > 0) failures.push(`${duplicated} duplicated intents`)
    const byStatus = totalByStatus(result.counts)
    if ((byStatus['503'] ?? 0) === 0) failures.push('no 503 while the database was down')
    return {
      case: 'PostgreSQL stopped and started during payment-intent creates',
      load: `${options.concurrency} loops, keyed creates from 2 clients, each key retried to 201`,
      sent: result.sent,
      byStatus,
      lost,
      duplicated,
      recoveryMs: firstCreatedAfterStart === 0 ? undefined : firstCreatedAfterStart - startedAt,
      failures,
      notes: `${keys.filter((k) => k.id !== undefined).length} intents acknowledged; down ${options.phaseMs} ms`,
    }
  } finally {
    gw.child.kill('SIGKILL')
    await gw.exited
    await cfg.remove()
    await server.remove()
  }
}
