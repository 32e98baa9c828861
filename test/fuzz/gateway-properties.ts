import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'
import { startLaneSimulator, type LaneSimulator } from '../simulators/lane-simulator.js'

/**
 * Property fuzzing of the whole gateway (shared/RELIABILITY.md §I), on the demo gateway.yaml with rate limits
 * raised out of the way. Four input classes, each one property: whatever the input, the answer is not a 5xx the
 * gateway made itself (a lane's own 502/504 relayed as `upstream_error` is allowed on lane paths), the process
 * does not crash or log at error level, and every refusal is in its route's envelope. Used by
 * test/fuzz/gateway-fuzz.test.ts (few runs, fixed seed, in `npm test`) and test/fuzz/run-fuzz.ts
 * (`npm run fuzz`: many runs, printed figures).
 */

export type FuzzClass = 'token_form' | 'bearer_token' | 'lane_path' | 'payment_body'
export const FUZZ_CLASSES: readonly FuzzClass[] = ['token_form', 'bearer_token', 'lane_path', 'payment_body']

export interface ClassFigures {
  cases: number
  /** Answers by status class (`2xx`, `4xx`, …). */
  statuses: Record<string, number>
  /** 5xx made by the gateway itself (anything but a relayed lane failure). */
  server_errors: number
  /** Answers outside the route's envelope. */
  envelope_violations: number
  /** inject() itself refused the input (not a valid HTTP request): not sent, not counted as a case. */
  unsendable: number
  /** The first counterexample, when the property failed. */
  counterexample?: string
}

export interface FuzzFigures {
  seed: number
  classes: Record<FuzzClass, ClassFigures>
  /** Error-level log lines written during the run (a crash or an unexpected failure). */
  error_log_lines: number
  /** Whether /healthz still answered 200 at the end. */
  alive: boolean
}

export interface FuzzRunOptions {
  seed: number
  /** Runs per class. */
  runs: Record<FuzzClass, number>
}

interface Fixture {
  gw: TestApp
  lane: LaneSimulator
  paymentsToken: string
  exchangeToken: string
}

async function fixture (): Promise<Fixture> {
  const lane = await startLaneSimulator({ name: 'fuzz-lane' })
  const gw = await buildTestApp({
    logLevel: 'warn',
    env: { LANE_001_URL: lane.url, LANE_002_URL: lane.url, LANE_900_URL: lane.url },
    patch: (config) => {
      for (const limit of Object.values(config.rate_limits)) limit.points = 1_000_000_000
      config.issuer.token_rate_limit.points = 1_000_000_000
      config.issuer.failed_auth_limit.points = 1_000_000_000
    },
  })
  const paymentsToken = await getToken(gw.app, 'demo-checkout')
  const exchangeToken = await getToken(gw.app, 'demo-exchange')
  return { gw, lane, paymentsToken, exchangeToken }
}

function json (res: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(res.body) as unknown
  } catch {
    return undefined
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** oauth envelope: 200 with an access token, or `{error, error_description?}`. */
function oauthEnvelope (res: LightMyRequestResponse): boolean {
  const body = json(res)
  if (!isObject(body)) return false
  if (res.statusCode === 200) return typeof body.access_token === 'string'
  return typeof body.error === 'string' && (body.error_description === undefined || typeof body.error_description === 'string')
}

/** payments envelope: `{success:true, data}` or `{success:false, message}` (429: `{error, retry_after}`). */
function paymentsEnvelope (res: LightMyRequestResponse): boolean {
  const body = json(res)
  if (!isObject(body)) return false
  if (res.statusCode < 300) return body.success === true && 'data' in body
  if (res.statusCode === 429) return typeof body.error === 'string'
  return body.success === false && typeof body.message === 'string'
}

/** exchange envelope for the gateway's own refusals: `{error, …}`. A 2xx from the lane passes through as is. */
function exchangeEnvelope (res: LightMyRequestResponse): boolean {
  if (res.statusCode < 300) return true
  const body = json(res)
  return isObject(body) && typeof body.error === 'string'
}

const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`

// ---- Arbitraries -------------------------------------------------------------------------------------------

const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '%', '%zz', '%00', '&', '=', '+', '\u0000', 'client_credentials', 'demo-checkout', 'demo-checkout-secret', 'commerce:payment-intents.read'),
)

/** A valid request's parameters with a random scope (some granted, some not), so some cases succeed. */
const validParams = fc.tuple(fc.constantFrom('demo-checkout', 'demo-status', 'demo-content'), fc.oneof(fc.constant(undefined), fc.constantFrom('commerce:payment-intents.read', 'engage:content.view', 'commerce:payment-intents.read commerce:payment-intents.create'), anyText))
  .map(([client, scope]): [string, string][] => [['grant_type', 'client_credentials'], ['client_id', client], ['client_secret', `${client}-secret`], ...(scope === undefined ? [] : [['scope', scope] as [string, string]])])

/** A form body from known and unknown parameters (repeated ones included), encoded or raw. */
const tokenForm = fc.record({
  params: fc.oneof(
    { weight: 4, arbitrary: fc.array(fc.tuple(fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'x', 'grant_type[]', ''), anyText), { maxLength: 6 }) },
    { weight: 1, arbitrary: validParams },
  ),
  raw: fc.boolean(),
  contentType: fc.constantFrom('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', undefined),
  basic: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(anyText, anyText) }),
})

function formBody (params: [string, string][], raw: boolean): string {
  if (raw) return params.map(([k, v]) => `${k}=${v}`).join('&')
  return new URLSearchParams(params).toString()
}

const b64url = fc.base64String({ maxLength: 60 }).map((s) => s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''))

/** Bearer values: junk, JWT-shaped junk, and a real token with one segment or character changed. */
function bearerValue (real: string): fc.Arbitrary<string> {
  const [h = '', p = '', s = ''] = real.split('.')
  return fc.oneof(
    fc.constant(real),
    anyText,
    fc.tuple(b64url, b64url, b64url).map(([a, b, c]) => `${a}.${b}.${c}`),
    fc.tuple(fc.constantFrom(0, 1, 2), b64url).map(([i, seg]) => [h, p, s].map((x, j) => (j === i ? seg : x)).join('.')),
    fc.tuple(fc.nat({ max: real.length - 1 }), fc.constantFrom('A', '_', '-', '.', '=', ' ', '%')).map(([i, c]) => real.slice(0, i) + c + real.slice(i + 1)),
    fc.jsonValue({ maxDepth: 3 }).map((claims) => `${Buffer.from('{"alg":"none","typ":"at+jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims) ?? 'null').toString('base64url')}.`),
  )
}

const segmentChars = fc.constantFrom('a', 'Z', '0', '.', '..', '%2e', '%2E%2E', '%2f', '%2F', '%00', '%', '%zz', '~', '-', '_', '@', ':', ';', '=', ',', '!', '$', '\'', '(', '*', '+', 'é', '%C3%A9', '%FF', '\\', '//')
const laneSegment = fc.array(segmentChars, { minLength: 0, maxLength: 6 }).map((parts) => parts.join(''))
const lanePath = fc.record({
  store: fc.oneof(fc.constant('org_store_001'), fc.constantFrom('org_store_002', 'org_hq_demo', 'org_nope', 'ORG_STORE_001', ''), laneSegment),
  segments: fc.array(laneSegment, { maxLength: 5 }),
  query: fc.option(fc.array(fc.tuple(laneSegment, laneSegment), { maxLength: 3 }), { nil: undefined }),
  method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
})

/** Payment bodies: well-formed ones with hostile values, and any JSON at all, sometimes deeply nested. */
const paymentBody = fc.oneof(
  fc.record({
    organization_id: fc.constantFrom('org_store_001', 'org_hq_demo'),
    amount: fc.integer({ min: 1, max: 1_000_000 }),
    currency: fc.constantFrom('usd', 'USD'),
    description: fc.option(fc.string({ unit: 'grapheme', maxLength: 200 }), { nil: undefined }),
    metadata: fc.option(fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 40 }), { maxKeys: 5 }), { nil: undefined }),
  }, { requiredKeys: ['organization_id', 'amount', 'currency'] }).map((b) => JSON.stringify(b)),
  fc.record({
    organization_id: fc.option(fc.oneof(fc.constantFrom('org_store_001', 'org_hq_demo', 'org_other_hq'), anyText), { nil: undefined }),
    connected_account_id: fc.option(fc.oneof(fc.constantFrom('acct_store_001', 'acct_nope'), anyText), { nil: undefined }),
    amount: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1, 2 ** 53, 1e308), anyText),
    currency: fc.oneof(fc.constantFrom('usd', 'USD', 'eur', 'xxx', ''), anyText),
    description: fc.option(anyText, { nil: undefined }),
    metadata: fc.option(fc.oneof(fc.dictionary(anyText, anyText, { maxKeys: 5 }), fc.jsonValue({ maxDepth: 4 })), { nil: undefined }),
    capture_method: fc.option(fc.oneof(fc.constantFrom('automatic', 'manual'), anyText), { nil: undefined }),
  }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc.nat({ max: 5000 }).map((depth) => `{"amount":1,"currency":"usd","organization_id":"org_store_001","metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  anyText,
)
const paymentRequest = fc.record({
  body: paymentBody,
  idempotencyKey: fc.option(anyText, { nil: undefined }),
  cancel: fc.boolean(),
})

// ---- Running -----------------------------------------------------------------------------------------------

function emptyFigures (): ClassFigures {
  return { cases: 0, statuses: {}, server_errors: 0, envelope_violations: 0, unsendable: 0 }
}

/** Sends one request through inject; undefined when inject refuses the input itself (invalid header, URL). */
async function send (gw: TestApp, options: InjectOptions): Promise<LightMyRequestResponse | undefined> {
  try {
    return await gw.app.inject(options)
  } catch (error) {
    const code = (error as { code?: string }).code ?? ''
    if (code.startsWith('ERR_INVALID') || code === 'ERR_UNESCAPED_CHARACTERS' || error instanceof TypeError) return undefined
    throw error
  }
}

function record (figures: ClassFigures, res: LightMyRequestResponse | undefined, envelopeOk: boolean, allowed5xx = false): boolean {
  if (res === undefined) {
    figures.unsendable++
    return true
  }
  figures.cases++
  const cls = statusClass(res.statusCode)
  figures.statuses[cls] = (figures.statuses[cls] ?? 0) + 1
  const serverError = res.statusCode >= 500 && !allowed5xx
  if (serverError) figures.server_errors++
  if (!envelopeOk) figures.envelope_violations++
  return !serverError && envelopeOk
}

/** A failed run's counterexample (and what it threw), or undefined. */
type Outcome = string | undefined
function outcome<T> (details: fc.RunDetails<T>): Outcome {
  if (!details.failed) return undefined
  return `${fc.stringify(details.counterexample)}${details.errorInstance === undefined ? '' : ` threw ${String(details.errorInstance)}`}`
}

/** Runs the four properties with `options.runs` cases each and returns the figures. */
export async function runGatewayFuzz (options: FuzzRunOptions): Promise<FuzzFigures> {
  const fx = await fixture()
  const { gw } = fx
  const classes = Object.fromEntries(FUZZ_CLASSES.map((c) => [c, emptyFigures()])) as Record<FuzzClass, ClassFigures>
  const settings = (cls: FuzzClass) => ({ seed: options.seed, numRuns: options.runs[cls], endOnFailure: true })
  try {
    const results: [FuzzClass, Outcome][] = []

    results.push(['token_form', outcome(await fc.check(fc.asyncProperty(tokenForm, async (input) => {
      const headers: Record<string, string> = {}
      if (input.contentType !== undefined) headers['content-type'] = input.contentType
      if (input.basic !== undefined) headers.authorization = `Basic ${Buffer.from(`${input.basic[0]}:${input.basic[1]}`).toString('base64')}`
      const res = await send(gw, { method: 'POST', url: '/oauth/token', headers, payload: formBody(input.params, input.raw) })
      return record(classes.token_form, res, res === undefined || oauthEnvelope(res))
    }), settings('token_form')))])

    results.push(['bearer_token', outcome(await fc.check(fc.asyncProperty(bearerValue(fx.paymentsToken), fc.constantFrom('Bearer ', 'bearer ', 'Bearer  ', 'Basic ', ''), async (token, scheme) => {
      const res = await send(gw, { method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: { authorization: `${scheme}${token}` } })
      return record(classes.bearer_token, res, res === undefined || paymentsEnvelope(res))
    }), settings('bearer_token')))])

    results.push(['lane_path', outcome(await fc.check(fc.asyncProperty(lanePath, async (input) => {
      const query = input.query === undefined ? '' : `?${input.query.map(([k, v]) => `${k}=${v}`).join('&')}`
      const url = `/v1/stores/${input.store}/live/${input.segments.join('/')}${query}`
      const res = await send(gw, { method: input.method as 'GET', url, headers: { authorization: `Bearer ${fx.exchangeToken}` } })
      if (res === undefined) return record(classes.lane_path, res, true)
      const body = json(res)
      // A lane's own failure, relayed in the exchange envelope, is the lane's 5xx, not the gateway's.
      const relayed = res.statusCode >= 500 && isObject(body) && body.error === 'upstream_error'
      return record(classes.lane_path, res, input.method === 'HEAD' || exchangeEnvelope(res), relayed)
    }), settings('lane_path')))])

    results.push(['payment_body', outcome(await fc.check(fc.asyncProperty(paymentRequest, async (input) => {
      const headers: Record<string, string> = { authorization: `Bearer ${fx.paymentsToken}`, 'content-type': 'application/json' }
      if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey
      const url = input.cancel ? '/api/v1/ecommerce/payment-intents/pi_01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel' : '/api/v1/ecommerce/payment-intents'
      const res = await send(gw, { method: 'POST', url, headers, payload: input.body })
      return record(classes.payment_body, res, res === undefined || paymentsEnvelope(res))
    }), settings('payment_body')))])

    for (const [cls, result] of results) {
      if (result !== undefined) classes[cls].counterexample = result
    }
    const alive = (await gw.app.inject({ method: 'GET', url: '/healthz' })).statusCode === 200
    const errorLines = gw.logs.filter((l) => l.includes('"level":50') || l.includes('"level":60'))
    if (process.env.LANEGATE_FUZZ_SHOW_ERRORS === '1') for (const line of errorLines) console.error(line)
    return { seed: options.seed, classes, error_log_lines: errorLines.length, alive }
  } finally {
    await gw.close()
    await fx.lane.close()
  }
}
