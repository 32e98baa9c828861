import { resolve } from 'node:path'
import { parseDocument } from 'yaml'
import { withBreakerSplit, withMirrorRoute, type BenchMirror } from './proxy-groups-config.js'

/** What a benchmark gateway config changes in the demo config. */
export interface BenchConfigOptions {
  /** Where the gateway keeps its SQLite file and keys (a temp dir per run). */
  dataDir: string
  /** The bench lane's base URL, given to store org_store_001. */
  laneUrl: string
  /** pino level; `warn` keeps per-request logging out of the measurement. */
  logLevel?: string
  /**
   * When set, the content route's per-client limit allows only this many requests per hour (the 429 scenario);
   * otherwise every limit is effectively unlimited so the measurement is of the chain, not of refusals.
   */
  floodPoints?: number
  /** false: `admin: false`, so the gateway collects no metrics (the metrics-off variant). Default: on. */
  metrics?: boolean
  /** admin.port when the bench starts the admin listener itself (the console variants); otherwise 0. */
  adminPort?: number
  /** Count the limits in this Redis (rate_limit_store.driver: redis) under `redisPrefix` instead of in memory. */
  redisUrl?: string
  redisPrefix?: string
  /** rate_limit_store.sync_interval_ms with `redisUrl`: the local pre-count (default: the exact round trip per request). */
  redisSyncIntervalMs?: number
  /** server.workers (default: the demo's 1). */
  workers?: number
  /** rate_limit_store.sync_interval_ms for the workers' pre-count (memory driver). */
  workersSyncIntervalMs?: number
  /**
   * The targets of the demo's `pricing` proxy service (proxy-service scenario), equal weights; its active health
   * probe is dropped so the targets' request counts are the callers' only.
   */
  proxyTargets?: string[]
  /** server.tls: the listener serves HTTPS with this pair (the tls scenario). */
  tls?: { certFile: string, keyFile: string }
  /**
   * The transform scenario: the `pricing` service gets two routes beside read_price, the same GET with one
   * `transform` each: a JSON field rename of the answer (`/renamed/:sku`), and a SOAP call (`/soap/:sku`).
   */
  transform?: boolean
  /**
   * proxy-service's breaker-split variant (issue 41): the `pricing` block's upstream (`proxyTargets`) becomes two
   * groups of the same targets, each with a circuit breaker, chosen by a sticky 50/50 split.
   */
  breakerSplit?: boolean
  /**
   * The proxy-mirror scenario (issue 41): the `pricing` block's upstream (`proxyTargets`) becomes the group
   * `primary`, beside a group `shadow` over this slow lane, and a route `/mirrored/:sku` mirrors to it.
   */
  mirror?: BenchMirror
  /** The cache scenario: the `pricing` service's read_price route ends in `cache` (fresh for 300 s, per client). */
  cache?: boolean
  /**
   * The api-key variant of auth-get: demo-content gets this API key hash and the content service authenticates with
   * `api-key` in place of `auth` (the rest of the chain unchanged).
   */
  apiKeyHash?: string
  /**
   * The external-auth scenario: the content service asks this decision service after `auth`, its decisions cached
   * for an hour (so every measured request is a cache hit).
   */
  externalAuthUrl?: string
  /**
   * The `--telemetry` variants: spans exported to this OTLP/HTTP endpoint (`telemetry.traces`, the default protocol
   * and queue), each export carrying `headers` (which gateway sent it), a trace recorded with `sampleRatio`.
   */
  traces?: { endpoint: string, sampleRatio: number, headers: Record<string, string> }
  /** `--signing-alg`: `issuer.algorithm`, the type of the key the gateway generates in its fresh data dir. */
  signingAlgorithm?: 'EdDSA' | 'ES256' | 'RS256'
  /** The `--telemetry` access-log variant: `access_log` with one `file` sink writing this (absolute) path, every field. */
  accessLogFile?: string
}

/** "Unlimited" for a rate limit: the schema needs an integer ≥ 1, and a billion never runs out in a bench. */
export const HUGE_LIMIT = 1_000_000_000

/**
 * Derives a benchmark config from the demo gateway.yaml text: same services, accounts and policy chains (so the
 * chain measured is the one users run), but quiet logs, a private data dir, the bench lane for store 001 and
 * limits that do not interfere — except the content limit in the 429 scenario.
 */
export function benchConfigText (demoText: string, options: BenchConfigOptions): string {
  const doc = parseDocument(demoText)
  if (doc.errors.length > 0) throw new Error(`gateway.yaml does not parse: ${doc.errors[0].message}`)
  doc.setIn(['server', 'log_level'], options.logLevel ?? 'warn')
  doc.setIn(['server', 'data_dir'], options.dataDir)
  // The bench boots the app without the admin listener; `admin: false` also turns metrics collection off.
  if (options.metrics === false) doc.setIn(['admin'], false)
  // The workers scenario spawns `lanegate start` (which does start it) twice at once: a free port each, never 9464.
  else doc.setIn(['admin', 'port'], options.adminPort ?? 0)
  // The bench config is written to a folder of its own, and relative paths resolve against the config's folder:
  // keep the content folder the demo names, as seen from the working directory (the repository root).
  const sourceDir = doc.getIn(['services', 'content', 'source_dir'])
  if (typeof sourceDir === 'string') doc.setIn(['services', 'content', 'source_dir'], resolve(sourceDir))
  if (options.signingAlgorithm !== undefined) doc.setIn(['issuer', 'algorithm'], options.signingAlgorithm)
  doc.setIn(['issuer', 'token_rate_limit', 'points'], HUGE_LIMIT)
  doc.setIn(['issuer', 'failed_auth_limit', 'points'], HUGE_LIMIT)
  const limits = doc.getIn(['rate_limits']) as { items?: Array<{ key: { value: string } }> } | undefined
  for (const item of limits?.items ?? []) doc.setIn(['rate_limits', item.key.value, 'points'], HUGE_LIMIT)
  if (options.redisUrl !== undefined) {
    doc.setIn(['rate_limit_store', 'driver'], 'redis')
    doc.setIn(['rate_limit_store', 'redis_url'], options.redisUrl)
    doc.setIn(['rate_limit_store', 'key_prefix'], options.redisPrefix ?? 'lanegate-bench')
    if (options.redisSyncIntervalMs !== undefined) doc.setIn(['rate_limit_store', 'sync_interval_ms'], options.redisSyncIntervalMs)
  }
  if (options.workers !== undefined) doc.setIn(['server', 'workers'], options.workers)
  if (options.tls !== undefined) doc.setIn(['server', 'tls'], doc.createNode({ cert_file: options.tls.certFile, key_file: options.tls.keyFile }))
  if (options.workersSyncIntervalMs !== undefined) doc.setIn(['rate_limit_store', 'sync_interval_ms'], options.workersSyncIntervalMs)
  if (options.floodPoints !== undefined) {
    doc.setIn(['rate_limits', 'content-per-client', 'points'], options.floodPoints)
    doc.setIn(['rate_limits', 'content-per-client', 'window_seconds'], 3600)
  }
  if (options.proxyTargets !== undefined) {
    doc.setIn(['services', 'pricing', 'upstream', 'targets'], doc.createNode(options.proxyTargets))
    doc.deleteIn(['services', 'pricing', 'upstream', 'health', 'active'])
  }
  if (options.breakerSplit === true) withBreakerSplit(doc)
  if (options.mirror !== undefined) withMirrorRoute(doc, options.mirror)
  if (options.cache === true) {
    const route = doc.getIn(['services', 'pricing', 'routes', 'read_price', 'policies']) as { add: (node: unknown) => void } | undefined
    if (route === undefined) throw new Error('gateway.yaml has no services.pricing.routes.read_price.policies')
    route.add(doc.createNode({ cache: { ttl_seconds: 300 } }))
  }
  if (options.transform === true) withTransformRoutes(doc)
  if (options.apiKeyHash !== undefined) withApiKey(doc, options.apiKeyHash)
  if (options.externalAuthUrl !== undefined) withExternalAuth(doc, options.externalAuthUrl)
  if (options.traces !== undefined) {
    const { endpoint, sampleRatio, headers } = options.traces
    doc.setIn(['telemetry'], doc.createNode({ traces: { endpoint, sample_ratio: sampleRatio, headers } }))
  }
  if (options.accessLogFile !== undefined) doc.setIn(['access_log'], doc.createNode({ sinks: [{ type: 'file', path: options.accessLogFile }] }))
  const organizations = doc.getIn(['organizations']) as { items: unknown[] }
  organizations.items.forEach((_org, o) => {
    const stores = doc.getIn(['organizations', o, 'stores']) as { items: unknown[] } | undefined
    stores?.items.forEach((_store, s) => {
      if (doc.getIn(['organizations', o, 'stores', s, 'id']) === 'org_store_001') {
        doc.setIn(['organizations', o, 'stores', s, 'lane', 'base_url'], options.laneUrl)
      }
    })
  })
  return doc.toString({ lineWidth: 0 })
}

/** The transform scenario's routes: read_price's chain, then a rename of the answer's fields, or a SOAP call. */
function withTransformRoutes (doc: ReturnType<typeof parseDocument>): void {
  const scope = { scope: { all: ['pricing:read'] } }
  const soap = { version: '1.1', namespace: 'urn:lanegate:bench', operation: 'GetItem', action: 'urn:lanegate:bench#GetItem' }
  doc.setIn(['services', 'pricing', 'routes', 'read_price_renamed'], doc.createNode({
    methods: ['GET'],
    path: '/renamed/:sku',
    policies: [scope, { transform: { response: { body: { rename: { status: 'state', lane: 'source' } } } } }],
  }))
  doc.setIn(['services', 'pricing', 'routes', 'read_price_soap'], doc.createNode({
    methods: ['GET'],
    path: '/soap/:sku',
    policies: [scope, { transform: { soap, request: { body: { map: '{ "sku": $params.sku }' } }, response: { body: { map: '{ "sku": sku, "qty": $number(qty), "status": status }' } } } }],
  }))
}

/** demo-content gets the API key `hash`; the content service's `auth` step becomes `api-key` (header X-Api-Key). */
function withApiKey (doc: ReturnType<typeof parseDocument>, hash: string): void {
  const accounts = doc.getIn(['service_accounts']) as { items: unknown[] }
  const at = accounts.items.findIndex((_a, i) => doc.getIn(['service_accounts', i, 'client_id']) === 'demo-content')
  if (at === -1) throw new Error('gateway.yaml has no demo-content account')
  doc.setIn(['service_accounts', at, 'api_keys'], doc.createNode([{ created: '2026-11-25', hash }]))
  const policies = doc.getIn(['services', 'content', 'policies']) as { items: unknown[] }
  const auth = policies.items.findIndex((_p, i) => doc.getIn(['services', 'content', 'policies', i, 'auth']) !== undefined)
  if (auth === -1) throw new Error('gateway.yaml\'s content service has no auth step')
  doc.setIn(['services', 'content', 'policies', auth], doc.createNode({ 'api-key': {} }))
}

/** The content service's chain gets `external-auth` right after `auth`, its decisions cached for an hour. */
function withExternalAuth (doc: ReturnType<typeof parseDocument>, url: string): void {
  const policies = doc.getIn(['services', 'content', 'policies']) as { items: unknown[] }
  const auth = policies.items.findIndex((_p, i) => doc.getIn(['services', 'content', 'policies', i, 'auth']) !== undefined)
  if (auth === -1) throw new Error('gateway.yaml\'s content service has no auth step')
  // The longest wait the schema allows: under --instructions the decision service runs in callgrind, far slower.
  policies.items.splice(auth + 1, 0, doc.createNode({ 'external-auth': { url, cache_seconds: 3600, timeout_ms: 30000 } }))
}
