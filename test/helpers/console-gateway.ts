import { readFile } from 'node:fs/promises'
import { repoPath } from './paths.js'
import { runNode } from './run-node.js'
import type { SpawnedGateway } from './spawn-gateway.js'
import { gatewayFixture, type FixtureFile, type GatewayFixture } from './gateway-fixture.js'
import { startBackend, type Backend } from './upstream-servers.js'
import { rawHttpTarget } from './raw-http-target.js'
import { startStubLane } from './fanout-lane.js'
import { fetchGatewayToken } from './fetch-token.js'
import { waitFor } from './wait-for.js'

interface Teardown {
  teardown (fn: () => unknown): void
}

/** The pricing proxy's upstream credential in these tests: it must never show in a console answer. */
export const PRICING_CREDENTIAL = 'console-test-pricing-credential-5c1e'

/** A real `lanegate start` on a copy of the demo gateway.yaml, with the upstreams the console shows. */
export interface ConsoleGateway {
  gw: SpawnedGateway
  /** The admin listener's URL (http://127.0.0.1:port). */
  admin: string
  config: FixtureFile
  /** The config as written (the demo with this helper's edits): derive an edited copy, then `config.write` it. */
  fixture: GatewayFixture
  /** The demo `pricing` proxy's two targets (answer /health and /prices/:sku). */
  pricing: [Backend, Backend]
  /** The environment the gateway runs with (the CLI is run with the same, so it reads the same config). */
  env: NodeJS.ProcessEnv
  /** `lanegate <args>` on the same config and environment; its stdout. */
  cli: (...args: string[]) => Promise<string>
}

/** Today's date (UTC, as the console's ISO timestamps write it): the first demo account's secret was created today. */
export const TODAY = new Date().toISOString().slice(0, 10)

/** The transform of the console gateway's list_prices route. */
export const CONSOLE_TRANSFORM = { request: { query: { rename: { cur: 'currency' }, remove: ['debug'] } }, response: { headers: { set: { 'x-prices-via': 'lanegate' } } } }

/**
 * The demo gateway with: the first account's secret created today (as on the day a secret is rotated),
 * payments-per-ip lowered to 5 a minute (429s come quickly), the pricing block's active
 * health checks every second (a stopped target is ejected within about a second), its two targets on local test
 * servers, store 001's lane hanging up without an answer (a live call gets a lane 502), and the admin listener
 * on a free port.
 */
export async function startConsoleGateway (t: Teardown): Promise<ConsoleGateway> {
  const pricing = await Promise.all(['pricing-a', 'pricing-b'].map(async (name) => {
    const backend = await startBackend(t, name)
    backend.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(req.url === '/health' ? { status: 'ok' } : { sku: req.url, price: '1.00', served_by: name }))
    })
    return backend
  })) as [Backend, Backend]
  const fixture = gatewayFixture()
    .set(['service_accounts', 0, 'secrets', 0, 'created'], TODAY)
    .set('rate_limits.payments-per-ip.points', 5)
    .set('services.pricing.upstream.health.active.interval_seconds', 1)
    // A route with a transform, whose changes the routes view lists under its chain.
    .append('services.pricing.routes.list_prices.policies', { transform: CONSOLE_TRANSFORM })
  // Store 002's lane answers fan-out previews and applies; store 001's hangs up on every request without an answer.
  // Its port stays held for the whole test (a closed port could be handed to the gateway's own listeners).
  const lane002 = await startStubLane()
  t.teardown(() => lane002.close())
  const lane001 = await rawHttpTarget((_path, socket) => socket.destroy())
  t.teardown(() => lane001.close())
  const env: NodeJS.ProcessEnv = {
    LANE_001_URL: `http://127.0.0.1:${lane001.port}`,
    LANE_002_URL: lane002.url,
    PRICING_URL_A: pricing[0].url,
    PRICING_URL_B: pricing[1].url,
    PRICING_TOKEN: PRICING_CREDENTIAL,
  }
  const { gateway: gw, ...config } = await fixture.start(t, { env })
  const cli = async (...args: string[]): Promise<string> => {
    const run = await runNode(repoPath('bin/lanegate.js'), args, { env: { ...env, LANEGATE_ADMIN_PORT: '0' } })
    if (run.code !== 0) throw new Error(`lanegate ${args.join(' ')} exited ${run.code}: ${run.stderr}`)
    return run.stdout
  }
  return { gw, admin: gw.admin as string, config, fixture, pricing, env, cli }
}

/** The 1-based line of `file`'s text that contains `needle` (what a config problem's line should be). */
export async function lineOf (file: string, needle: string): Promise<number> {
  const lines = (await readFile(file, 'utf8')).split('\n')
  const index = lines.findIndex((line) => line.includes(needle))
  if (index < 0) throw new Error(`no line with ${needle} in ${file}`)
  return index + 1
}

/** What `sendTraffic` sent and got. */
export interface Traffic {
  statuses: number[]
  /** Tokens it was issued (they must never show in a console answer). */
  tokens: string[]
  limited: number
}

/**
 * A 201 (a payment intent created), a 403 (demo-status may not create one), 429s (payments-per-ip is 5 a
 * minute in this config) and a lane 502 (store 001's lane does not answer).
 */
export async function sendTraffic (base: string): Promise<Traffic> {
  const checkout = await fetchGatewayToken(base, 'demo-checkout')
  const status = await fetchGatewayToken(base, 'demo-status')
  const exchange = await fetchGatewayToken(base, 'demo-exchange')
  const statuses: number[] = []
  const create = (token: string, key: string): Promise<Response> => fetch(`${base}/api/v1/ecommerce/payment-intents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ organization_id: 'org_hq_demo', amount: 1999, currency: 'usd', description: 'console test' }),
  })
  for (const res of [await create(checkout, `console-${Date.now()}`), await create(status, 'console-403')]) {
    statuses.push(res.status)
    await res.body?.cancel()
  }
  let limited = 0
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${base}/api/v1/ecommerce/payment-intents/pi_console`, { headers: { authorization: `Bearer ${checkout}` } })
    if (res.status === 429) limited++
    statuses.push(res.status)
    await res.body?.cancel()
  }
  const lane = await fetch(`${base}/v1/stores/org_store_001/live/status`, { headers: { authorization: `Bearer ${exchange}` } })
  statuses.push(lane.status)
  await lane.body?.cancel()
  return { statuses, tokens: [checkout, status, exchange], limited }
}

/**
 * Two fan-out dispatches of the demo's `price-change`: one to store 002 previewed and committed (its lane applies
 * it), one to stores 001 and 002 whose preview fails at store 001 (its lane does not answer). Their ids, in that
 * order.
 */
export async function sendDispatches (base: string): Promise<[string, string]> {
  const token = await fetchGatewayToken(base, 'demo-exchange')
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const preview = async (stores: string[]): Promise<string> => {
    const res = await fetch(`${base}/v1/fanout/preview`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ operation_type: 'price-change', payload: { product_code: '4011', retail_price: '0.79' }, store_org_ids: stores }),
    })
    const body = await res.json() as { dispatch_id?: string }
    if (body.dispatch_id === undefined) throw new Error(`preview: ${res.status} ${JSON.stringify(body)}`)
    return body.dispatch_id
  }
  const committed = await preview(['org_store_002'])
  const commit = await fetch(`${base}/v1/fanout/dispatches/${committed}/commit`, { method: 'POST', headers: { authorization: headers.authorization } })
  const answer = await commit.json() as { status?: string }
  if (answer.status !== 'committed') throw new Error(`commit: ${commit.status} ${JSON.stringify(answer)}`)
  return [committed, await preview(['org_store_001', 'org_store_002'])]
}

/** Polls `check` (test/helpers/wait-for.ts's waitFor) until it returns a value other than undefined, for `ms` at most. */
export async function eventually<T> (check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  return await waitFor(check, { what, timeoutMs: ms, intervalMs: 100 }) as T
}
