import { SignJWT } from 'jose'
import type { LoadJob } from './load-job.js'
import { peerWanted, type BenchOptions, type ScenarioId } from './options.js'
import { PEER_NAMES, peerMissing, type PeerName } from './peers.js'
import type { VariantRole } from './result-types.js'
import type { ConsolePoller, GatewayFlavour, RunningServer, ServerSet } from './servers.js'
import { GATEWAY_MIRRORED_PATH } from './mirror-settings.js'
import { CONSOLE_SUFFIX, TWIN_SUFFIX } from './console-cost.js'
import { ACCESS_FILE_SUFFIX, TELEMETRY_TWIN_SUFFIX, TRACE_ALL_SUFFIX, TRACE_NONE_SUFFIX, type TelemetryOutputs } from './telemetry-variants.js'
import { BENCH_API_KEY, CONTENT_CLIENT, EXCHANGE_CLIENT, PRICING_CLIENT, fetchToken, tokenForm } from './tokens.js'
import { EXPRESS_GATEWAY_JWT_SECRET } from './servers/express-gateway-secret.js'

/** One thing measured in a scenario: a server, the request sent to it, and the statuses it may answer. */
export interface PreparedVariant {
  name: string
  role: VariantRole
  server: RunningServer
  upstream?: RunningServer
  request: Pick<LoadJob, 'url' | 'method' | 'headers' | 'body' | 'reconnectRate'>
  /** Statuses the run may see; anything else (or any error) fails the bench. */
  expect: readonly number[]
  /** A sign loop (bench/servers/sign-loop.ts), run by the orchestrator instead of the load generator; `request` unused. */
  signLoop?: true
}

export interface ScenarioPlan {
  id: ScenarioId
  title: string
  kind: 'throughput' | 'latency'
  connections: number
  /** The baseline first. */
  variants: PreparedVariant[]
  skipped: Array<{ variant: string, reason: string }>
  /**
   * `--console`: the gateway with the console open, the one with it closed (the subject's) and the poller, for the
   * idle measurement and the poller's tally after the rounds.
   */
  console?: { open: RunningServer, closed: RunningServer, poller: ConsolePoller }
  /** `--telemetry`: where the trace and access-log variants' output went, checked after the rounds. */
  telemetry?: TelemetryOutputs
}

/** The lane path every proxy variant asks for (the lane ignores it; proxies must carry it). */
export const LANE_PATH = '/api/items/000123'
/** The same resource through the gateway's live proxy. */
export const GATEWAY_LIVE_PATH = `/v1/stores/org_store_001/live${LANE_PATH}`
/** The same kind of GET through the demo's `pricing` proxy service (auth → rate-limit → scope, two targets). */
export const GATEWAY_PROXY_PATH = '/legacy/pricing/prices/000123'
/** The transform scenario's GETs: the answer's fields renamed, and the same item through a SOAP call. */
export const GATEWAY_RENAMED_PATH = '/legacy/pricing/renamed/000123'
export const GATEWAY_SOAP_PATH = '/legacy/pricing/soap/000123'
/** The authenticated in-process route (content service: auth → rate-limit → scope). */
export const GATEWAY_CONTENT_PATH = '/public/v1/content'

const OK = [200] as const

export const SCENARIO_TITLES: Record<ScenarioId, string> = {
  'auth-get': 'Authenticated in-process GET through the full policy chain vs bare fastify hello-world',
  'auth-get-redis': 'The auth-get request with its limit counted in Redis (exact, and pre-counted with a sync every 50 ms) vs the same gateway counting in memory',
  'external-auth': 'The auth-get request with external-auth after auth and a warm decision cache (every decision a cache hit) vs plain auth-get, server CPU per request in the same rounds',
  workers: 'The auth-get request on `lanegate start` with server.workers: 2 (exact, and pre-counted with sync_interval_ms: 20) vs workers: 1, every process pinned to the same core',
  'live-proxy': 'Live-proxy GET to a lane through the full chain vs the lane hit directly',
  'proxy-service': 'GET through a `type: proxy` service (full chain, two equal targets) vs one target hit directly; the same with circuit breakers and a split over two target groups vs a second plain process, server CPU per request in the same rounds',
  'proxy-mirror': 'The proxy service\'s GET at c=1 on a route that mirrors 10 % of its requests to a group answering 2 s late vs the same GET unmirrored on the same gateway: p99 in the same rounds, copies sent and dropped',
  transform: 'The proxy service\'s GET with a `transform` (a JSON field rename of the answer; a JSON → SOAP → JSON call) vs the same GET relayed plainly, same gateway',
  cache: 'A cached GET through the `type: proxy` service (full chain, then cache: every request a HIT) vs bare fastify hello-world',
  token: 'Token issuance (POST /oauth/token) on one core vs bare fastify POST',
  'flood-429': 'The 429 path under a flood (content limit: 100 per hour) vs bare fastify hello-world',
  'latency-c1': 'Added latency of a proxied request at c=1 vs the lane hit directly',
  tls: 'The auth-get request over HTTPS keep-alive vs plain HTTP, and new TLS handshakes per second (a new connection per request), beside nginx terminating TLS',
  memory: 'RSS after many requests rotating through many distinct valid tokens',
  websocket: 'WebSocket messages echoed per second through the live proxy vs the lane directly (and nginx), and RSS of idle connections',
  'config-push': 'Push to applied over three instances following the config store (PostgreSQL), p50 and max',
}

function bearer (token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}

/** The bearer token a variant's request carries. */
function tokenOf (variant: PreparedVariant): string {
  const header = variant.request.headers?.authorization
  if (header === undefined) throw new Error(`${variant.name} sends no bearer token`)
  return header.slice('Bearer '.length)
}

async function laneDirect (servers: ServerSet): Promise<PreparedVariant> {
  const lane = await servers.lane()
  return { name: 'lane-direct', role: 'baseline', server: lane, request: { url: lane.url + LANE_PATH, method: 'GET' }, expect: OK }
}

async function gatewayLive (servers: ServerSet): Promise<PreparedVariant> {
  const gateway = await servers.gateway('main')
  const lane = await servers.lane()
  const token = await fetchToken(gateway.url, EXCHANGE_CLIENT)
  return {
    name: 'lanegate-live',
    role: 'subject',
    server: gateway,
    upstream: lane,
    request: { url: gateway.url + GATEWAY_LIVE_PATH, method: 'GET', headers: bearer(token) },
    expect: OK,
  }
}

/**
 * The same gateway request on a gateway with metrics off (`admin: false`): the subject's ratio against this
 * one's, in the same rounds, is what metrics cost (issue 14 asks for within 5 %).
 */
async function metricsOff (servers: ServerSet, path: string, name: string, client: string): Promise<PreparedVariant> {
  const gateway = await servers.gateway('no-metrics')
  await servers.lane()
  const token = await fetchToken(gateway.url, client)
  return { name, role: 'peer', server: gateway, request: { url: gateway.url + path, method: 'GET', headers: bearer(token) }, expect: OK }
}

/**
 * `--compare DIR`: the subject's request on the other checkout's gateway (same path, a token it issued), a peer
 * in the same rounds, named `<subject>@compare`.
 */
async function compareVariant (servers: ServerSet, subject: PreparedVariant, path: string, client: string): Promise<PreparedVariant> {
  const gateway = await servers.compareGateway()
  const token = await fetchToken(gateway.url, client)
  return { ...subject, name: `${subject.name}@compare`, role: 'peer', server: gateway, request: { ...subject.request, url: gateway.url + path, headers: bearer(token) } }
}

/**
 * `--console`: the subject's request on a gateway of the same config with the operator console open and polled (a
 * peer in the same rounds, named `<subject>+console`); the subject's own gateway has it closed. Beside them the
 * control, `<subject>+closed-twin`: a third gateway of the same config, console closed, so the run shows how far two
 * closed processes differ. Records the pair on the plan for the idle measurement.
 */
async function consoleVariants (servers: ServerSet, plan: ScenarioPlan, subject: PreparedVariant, path: string, client: string): Promise<PreparedVariant[]> {
  const open = await servers.gateway('console')
  const twin = await servers.gateway('console-twin')
  const poller = await servers.consolePoller()
  plan.console = { open, closed: subject.server, poller }
  const on = async (server: RunningServer, suffix: string): Promise<PreparedVariant> => {
    const token = await fetchToken(server.url, client)
    return { ...subject, name: `${subject.name}${suffix}`, role: 'peer', server, request: { ...subject.request, url: server.url + path, headers: bearer(token) } }
  }
  return [await on(open, CONSOLE_SUFFIX), await on(twin, TWIN_SUFFIX)]
}

/**
 * `--telemetry`: the subject's request on gateways of the same config plus span export with every trace sampled,
 * with none sampled, and the access log to a file, beside a second plain process (the control); peers in the same
 * rounds, named by suffix (telemetry-variants.ts). Records on the plan where their output goes, for the check after.
 */
async function telemetryVariants (servers: ServerSet, plan: ScenarioPlan, subject: PreparedVariant, path: string, client: string, spansPerRequest: number): Promise<PreparedVariant[]> {
  const on = async (flavour: GatewayFlavour, suffix: string): Promise<PreparedVariant> => {
    const server = await servers.gateway(flavour)
    const token = await fetchToken(server.url, client)
    return { ...subject, name: `${subject.name}${suffix}`, role: 'peer', server, request: { ...subject.request, url: server.url + path, headers: bearer(token) } }
  }
  const variants = [
    await on('trace-100', TRACE_ALL_SUFFIX),
    await on('trace-0', TRACE_NONE_SUFFIX),
    await on('access-file', ACCESS_FILE_SUFFIX),
    await on('twin', TELEMETRY_TWIN_SUFFIX),
  ]
  plan.telemetry = { subject: subject.name, sinkUrl: (await servers.otlpSink()).url, accessLogFile: servers.accessLogFile(), spansPerRequest }
  return variants
}

/**
 * A token Express Gateway's jwt policy accepts, as long as `length` (the gateway's token) or one character longer
 * (a base64url segment cannot have every length): a claim of padding grows it.
 */
export async function expressGatewayToken (length: number): Promise<string> {
  const secret = new TextEncoder().encode(EXPRESS_GATEWAY_JWT_SECRET)
  let token = ''
  for (let pad = 0; token.length < length; pad++) {
    token = await new SignJWT({ sub: 'bench', pad: 'x'.repeat(pad) }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('2h').sign(secret)
  }
  return token
}

/**
 * Peer `peer`'s variant. Every peer is sent the gateway's own bearer token (`token`), which it ignores (Express
 * Gateway's jwt variant gets a valid one of the same length): each server reads the same request bytes.
 */
async function peerVariant (servers: ServerSet, peer: PeerName, token: string): Promise<PreparedVariant> {
  const lane = await servers.lane()
  const base = { name: peer, role: 'peer' as const, upstream: lane, expect: OK }
  const get = (url: string): PreparedVariant['request'] => ({ url, method: 'GET', headers: bearer(token) })
  switch (peer) {
    case 'nginx': {
      const server = await servers.nginx()
      return { ...base, server, request: get(server.url + LANE_PATH) }
    }
    case 'fast-gateway': {
      const server = await servers.fastGateway()
      return { ...base, server, request: get(`${server.url}/v1${LANE_PATH}`) }
    }
    case 'express-gateway': {
      const server = await servers.expressGateway('proxy')
      return { ...base, server, request: get(server.url + LANE_PATH) }
    }
    case 'express-gateway-jwt': {
      const server = await servers.expressGateway('jwt')
      return { ...base, server, request: { url: server.url + LANE_PATH, method: 'GET', headers: bearer(await expressGatewayToken(token.length)) } }
    }
    case 'http-proxy-3': {
      const server = await servers.httpProxy()
      return { ...base, server, request: get(server.url + LANE_PATH) }
    }
    case 'undici-floor': {
      const server = await servers.undiciFloor()
      return { ...base, server, request: get(server.url + LANE_PATH) }
    }
    case 'net-floor': {
      const server = await servers.netFloor()
      return { ...base, server, request: get(server.url + LANE_PATH) }
    }
  }
}

/**
 * Adds every available peer the run wants (`peerWanted`), each sent `token` (the subject's); a peer that is
 * missing or fails to start is skipped with the reason.
 */
async function addPeers (servers: ServerSet, plan: ScenarioPlan, options: BenchOptions, token: string): Promise<void> {
  for (const peer of PEER_NAMES) {
    if (!peerWanted(options, peer)) continue
    const missing = peerMissing(peer)
    if (missing !== undefined) {
      plan.skipped.push({ variant: peer, reason: missing })
      continue
    }
    try {
      plan.variants.push(await peerVariant(servers, peer, token))
    } catch (error) {
      plan.skipped.push({ variant: peer, reason: (error as Error).message })
    }
  }
}

/** The auth-get request authenticated by an API key (`api-key` in place of `auth`, the key cached after its first use). */
async function apiKeyGet (servers: ServerSet): Promise<PreparedVariant> {
  const gateway = await servers.gateway('api-key')
  const headers = { 'x-api-key': BENCH_API_KEY }
  // The first use of the key pays its scrypt run; the measured requests are cache hits.
  const first = await fetch(gateway.url + GATEWAY_CONTENT_PATH, { headers })
  await first.arrayBuffer()
  if (first.status !== 200) throw new Error(`api-key variant: first GET answered ${first.status}`)
  return { name: 'lanegate-api-key-get', role: 'peer', server: gateway, request: { url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET', headers }, expect: OK }
}

/** `fastify-same-response` from bare fastify with the fastify options a gateway needs (servers/hello.ts `--as-gateway`). */
async function sameResponseAsGateway (servers: ServerSet, token: string): Promise<PreparedVariant> {
  const hello = await servers.hello(true)
  return { name: 'fastify-same-response-as-gateway', role: 'peer', server: hello, request: { url: hello.url + '/content', method: 'GET', headers: bearer(token) }, expect: OK }
}

/** Starts what scenario `id` needs and describes its variants (the memory scenario has its own runner). */
export async function prepareScenario (id: Exclude<ScenarioId, 'memory'>, servers: ServerSet, options: BenchOptions): Promise<ScenarioPlan> {
  const plan: ScenarioPlan = { id, title: SCENARIO_TITLES[id], kind: 'throughput', connections: options.connections, variants: [], skipped: [] }
  switch (id) {
    case 'auth-get': {
      const hello = await servers.hello()
      const gateway = await servers.gateway('main')
      const token = await fetchToken(gateway.url, CONTENT_CLIENT)
      plan.variants.push(
        { name: 'fastify-hello', role: 'baseline', server: hello, request: { url: hello.url + '/', method: 'GET' }, expect: OK },
        { name: 'lanegate-auth-get', role: 'subject', server: gateway, request: { url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(token) }, expect: OK },
        // Not a target: bare fastify answering the same request with the same headers and body (see hello.ts).
        { name: 'fastify-same-response', role: 'peer', server: hello, request: { url: hello.url + '/content', method: 'GET', headers: bearer(token) }, expect: OK },
        // The same, with a logger and request ids set as the gateway sets them: what is left above it is lanegate's.
        await sameResponseAsGateway(servers, token),
        await metricsOff(servers, GATEWAY_CONTENT_PATH, 'lanegate-auth-get-metrics-off', CONTENT_CLIENT),
        await apiKeyGet(servers),
      )
      if (options.compare !== undefined) plan.variants.push(await compareVariant(servers, plan.variants[1] as PreparedVariant, GATEWAY_CONTENT_PATH, CONTENT_CLIENT))
      if (options.console) plan.variants.push(...await consoleVariants(servers, plan, plan.variants[1] as PreparedVariant, GATEWAY_CONTENT_PATH, CONTENT_CLIENT))
      // One SERVER span per request.
      if (options.telemetry) plan.variants.push(...await telemetryVariants(servers, plan, plan.variants[1] as PreparedVariant, GATEWAY_CONTENT_PATH, CONTENT_CLIENT, 1))
      break
    }
    case 'auth-get-redis': {
      const memory = await servers.gateway('main')
      const redis = await servers.gateway('redis')
      const synced = await servers.gateway('redis-synced')
      const request = async (gateway: RunningServer): Promise<PreparedVariant['request']> =>
        ({ url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(await fetchToken(gateway.url, CONTENT_CLIENT)) })
      plan.variants.push(
        { name: 'lanegate-auth-get', role: 'baseline', server: memory, request: await request(memory), expect: OK },
        // The issue-16 target: route limits pre-counted locally, synchronised with Redis every 50 ms.
        { name: 'lanegate-auth-get-redis-synced', role: 'subject', server: synced, request: await request(synced), expect: OK },
        // Reported: the exact mode (sync_interval_ms: 0), one Redis round trip per request.
        { name: 'lanegate-auth-get-redis', role: 'subject', server: redis, request: await request(redis), expect: OK },
      )
      break
    }
    case 'external-auth': {
      const plain = await servers.gateway('main')
      const asking = await servers.gateway('external-auth')
      const request = async (gateway: RunningServer): Promise<PreparedVariant['request']> =>
        ({ url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(await fetchToken(gateway.url, CONTENT_CLIENT)) })
      const subject = await request(asking)
      // The first request asks the decision service; every measured one is a hit of the decision cache.
      const first = await fetch(subject.url, { headers: subject.headers })
      await first.arrayBuffer()
      if (first.status !== 200) throw new Error(`external-auth scenario: first GET answered ${first.status}`)
      const twin = await servers.gateway('twin')
      plan.variants.push(
        { name: 'lanegate-auth-get', role: 'baseline', server: plain, request: await request(plain), expect: OK },
        { name: 'lanegate-auth-get-external-auth', role: 'subject', server: asking, request: subject, expect: OK },
        // The control: a second process of the baseline's config. How far it differs is the noise the ratio sits in.
        { name: 'lanegate-auth-get-twin', role: 'peer', server: twin, request: await request(twin), expect: OK },
      )
      break
    }
    case 'workers': {
      const one = await servers.gateway('workers-1')
      const two = await servers.gateway('workers-2')
      const precount = await servers.gateway('workers-2-precount')
      const request = async (gateway: RunningServer): Promise<PreparedVariant['request']> =>
        ({ url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(await fetchToken(gateway.url, CONTENT_CLIENT)) })
      plan.variants.push(
        { name: 'lanegate-workers-1', role: 'baseline', server: one, request: await request(one), expect: OK },
        // Exact: one IPC round trip to the primary per counted request.
        { name: 'lanegate-workers-2', role: 'subject', server: two, request: await request(two), expect: OK },
        // The issue-24 target: the workers pre-count their limits and sync with the primary every 20 ms.
        { name: 'lanegate-workers-2-precount', role: 'subject', server: precount, request: await request(precount), expect: OK },
      )
      break
    }
    case 'live-proxy':
    case 'latency-c1': {
      plan.variants.push(await laneDirect(servers), await gatewayLive(servers))
      if (id === 'live-proxy') plan.variants.push(await metricsOff(servers, GATEWAY_LIVE_PATH, 'lanegate-live-metrics-off', EXCHANGE_CLIENT))
      if (options.compare !== undefined) plan.variants.push(await compareVariant(servers, plan.variants[1] as PreparedVariant, GATEWAY_LIVE_PATH, EXCHANGE_CLIENT))
      if (options.console && id === 'live-proxy') plan.variants.push(...await consoleVariants(servers, plan, plan.variants[1] as PreparedVariant, GATEWAY_LIVE_PATH, EXCHANGE_CLIENT))
      // The SERVER span and the upstream attempt's CLIENT span.
      if (options.telemetry && id === 'live-proxy') plan.variants.push(...await telemetryVariants(servers, plan, plan.variants[1] as PreparedVariant, GATEWAY_LIVE_PATH, EXCHANGE_CLIENT, 2))
      await addPeers(servers, plan, options, tokenOf(plan.variants[1] as PreparedVariant))
      if (id === 'latency-c1') {
        plan.kind = 'latency'
        plan.connections = 1
      }
      break
    }
    case 'proxy-service': {
      // Both targets are bench lanes pinned to the servers' core; the baseline is one of them hit directly.
      const lane = await servers.lane()
      const proxied = async (flavour: GatewayFlavour): Promise<Pick<PreparedVariant, 'server' | 'upstream' | 'request' | 'expect'>> => {
        const gateway = await servers.gateway(flavour)
        return { server: gateway, upstream: lane, request: { url: gateway.url + GATEWAY_PROXY_PATH, method: 'GET', headers: bearer(await fetchToken(gateway.url, PRICING_CLIENT)) }, expect: OK }
      }
      plan.variants.push(
        await laneDirect(servers),
        { name: 'lanegate-proxy-service', role: 'subject', ...await proxied('proxy') },
        // Issue 41: the same targets as two groups with circuit breakers, a sticky split choosing one per request.
        { name: 'lanegate-proxy-breaker-split', role: 'subject', ...await proxied('proxy-breaker-split') },
        // The control: a second process of the plain config. How far it differs is the noise the ratio sits in.
        { name: 'lanegate-proxy-service-twin', role: 'peer', ...await proxied('proxy-twin') },
      )
      break
    }
    case 'proxy-mirror': {
      // One gateway, two routes of the same chain to the same lane: one copies 10 % of its requests to a group
      // whose lane answers 2 s late. At c=1, sample-counted like latency-c1, so p99 rests on the same numbers.
      const gateway = await servers.gateway('proxy-mirror')
      const lane = await servers.lane()
      const headers = bearer(await fetchToken(gateway.url, PRICING_CLIENT))
      const get = (path: string) => ({ url: gateway.url + path, method: 'GET' as const, headers })
      plan.variants.push(
        { name: 'lanegate-proxy-unmirrored', role: 'baseline', server: gateway, upstream: lane, request: get(GATEWAY_PROXY_PATH), expect: OK },
        { name: 'lanegate-proxy-mirrored', role: 'subject', server: gateway, upstream: lane, request: get(GATEWAY_MIRRORED_PATH), expect: OK },
      )
      plan.kind = 'latency'
      plan.connections = 1
      break
    }
    case 'transform': {
      // One target (the lane, which answers a SOAP call with an envelope); the baseline is the plain relay's GET.
      const gateway = await servers.gateway('proxy-transform')
      const lane = await servers.lane()
      const headers = bearer(await fetchToken(gateway.url, PRICING_CLIENT))
      const get = (path: string) => ({ url: gateway.url + path, method: 'GET' as const, headers })
      plan.variants.push(
        { name: 'lanegate-proxy-plain', role: 'baseline', server: gateway, upstream: lane, request: get(GATEWAY_PROXY_PATH), expect: OK },
        { name: 'lanegate-transform-rename', role: 'subject', server: gateway, upstream: lane, request: get(GATEWAY_RENAMED_PATH), expect: OK },
        { name: 'lanegate-transform-soap', role: 'subject', server: gateway, upstream: lane, request: get(GATEWAY_SOAP_PATH), expect: OK },
      )
      break
    }
    case 'cache': {
      // One target, the read_price route ending in `cache`: after the priming request every GET is a HIT.
      const hello = await servers.hello()
      const gateway = await servers.gateway('proxy-cache')
      const token = await fetchToken(gateway.url, PRICING_CLIENT)
      const headers = bearer(token)
      const primed = await fetch(gateway.url + GATEWAY_PROXY_PATH, { headers })
      await primed.arrayBuffer()
      if (primed.status !== 200) throw new Error(`cache scenario: priming GET answered ${primed.status}`)
      plan.variants.push(
        { name: 'fastify-hello', role: 'baseline', server: hello, request: { url: hello.url + '/', method: 'GET' }, expect: OK },
        { name: 'lanegate-proxy-cache-hit', role: 'subject', server: gateway, request: { url: gateway.url + GATEWAY_PROXY_PATH, method: 'GET', headers }, expect: OK },
      )
      break
    }
    case 'token': {
      const hello = await servers.hello()
      const gateway = await servers.gateway('main')
      // "A known client": one issuance first, so the secret's scrypt verification is cached before the flood
      // (otherwise every connection's first request runs its own scrypt and the warm-up sees nothing for seconds).
      const token = await fetchToken(gateway.url, CONTENT_CLIENT)
      const form = { 'content-type': 'application/x-www-form-urlencoded' }
      plan.variants.push(
        { name: 'fastify-hello-post', role: 'baseline', server: hello, request: { url: hello.url + '/', method: 'POST', headers: form, body: tokenForm(CONTENT_CLIENT) }, expect: OK },
        { name: 'lanegate-token', role: 'subject', server: gateway, request: { url: `${gateway.url}/oauth/token`, method: 'POST', headers: form, body: tokenForm(CONTENT_CLIENT) }, expect: OK },
      )
      // A token's signature alone, the same key signing the same payload: the token's CPU less it is the rest. It is
      // timed, not sent requests, so `--instructions` has nothing per request to count in it.
      if (!options.instructions) {
        const signer = await servers.signLoop(token)
        plan.variants.push({ name: 'token-sign-only', role: 'peer', server: signer, request: { url: `${signer.url}/loop`, method: 'GET' }, expect: OK, signLoop: true })
      }
      break
    }
    case 'tls': {
      // Keep-alive: the subject's ratio to the plain baseline is what TLS costs a request (issue 21: ≥ 0.9).
      // Handshakes: autocannon's reconnectRate 1 opens a new connection (a full handshake: it keeps no session)
      // per request; its req/s are handshakes per second, to set beside nginx's (issue 21: ≥ 0.5×).
      const plain = await servers.gateway('main')
      const tls = await servers.gateway('tls')
      const plainToken = await fetchToken(plain.url, CONTENT_CLIENT)
      const tlsToken = await fetchToken(tls.url, CONTENT_CLIENT)
      plan.variants.push(
        { name: 'lanegate-auth-get', role: 'baseline', server: plain, request: { url: plain.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(plainToken) }, expect: OK },
        { name: 'lanegate-auth-get-https', role: 'subject', server: tls, request: { url: tls.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(tlsToken) }, expect: OK },
        { name: 'lanegate-https-handshakes', role: 'subject', server: tls, request: { url: tls.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(tlsToken), reconnectRate: 1 }, expect: OK },
      )
      if (peerWanted(options, 'nginx')) {
        const missing = peerMissing('nginx')
        if (missing !== undefined) plan.skipped.push({ variant: 'nginx-https', reason: missing })
        else {
          try {
            const nginx = await servers.nginx(true)
            const nginxPlain = await servers.nginx(false)
            const lane = await servers.lane()
            plan.variants.push(
              // nginx's own HTTPS ÷ plain in the same rounds: what TLS costs a proxy written in C, beside ours.
              { name: 'nginx', role: 'peer', server: nginxPlain, upstream: lane, request: { url: nginxPlain.url + LANE_PATH, method: 'GET' }, expect: OK },
              { name: 'nginx-https', role: 'peer', server: nginx, upstream: lane, request: { url: nginx.url + LANE_PATH, method: 'GET' }, expect: OK },
              { name: 'nginx-https-handshakes', role: 'peer', server: nginx, upstream: lane, request: { url: nginx.url + LANE_PATH, method: 'GET', reconnectRate: 1 }, expect: OK },
            )
          } catch (error) {
            plan.skipped.push({ variant: 'nginx-https', reason: (error as Error).message })
          }
        }
      }
      break
    }
    case 'flood-429': {
      const hello = await servers.hello()
      const gateway = await servers.gateway('flood')
      const token = await fetchToken(gateway.url, CONTENT_CLIENT)
      plan.variants.push(
        { name: 'fastify-hello', role: 'baseline', server: hello, request: { url: hello.url + '/', method: 'GET' }, expect: OK },
        { name: 'lanegate-429', role: 'subject', server: gateway, request: { url: gateway.url + GATEWAY_CONTENT_PATH, method: 'GET', headers: bearer(token) }, expect: [200, 429] },
      )
      break
    }
  }
  return plan
}
