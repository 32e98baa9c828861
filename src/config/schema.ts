import { Type, type Static, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { envelopeNames } from '../plugin/envelope-name.js'
import { accessLog } from './access-log-schema.js'
import { telemetry } from './telemetry-schema.js'

/**
 * The first validation pass: the structure of gateway.yaml as JSON Schema (ajv, `useDefaults`), written in TypeBox
 * so that the same declaration gives the TypeScript types (`config/types.ts` derives them with `Static`). Every key
 * has a description (docs/configuration.md says the same in prose) and every object rejects unknown keys, so a
 * typo is an error rather than a silently ignored setting. Policy options and service settings are checked in the
 * second pass by their own schemas.
 *
 * A key with a default is declared required, as the services' settings schemas do: Ajv fills defaults before it
 * checks `required`, so the file may leave it out, and `Static` is the config as loaded (the key present).
 * `Type.Optional` marks the keys that may still be absent after loading.
 */
type Options = Record<string, unknown>

const str = (description: string, extra: Options = {}) => Type.String({ description, ...extra })
const int = (description: string, extra: Options = {}) => Type.Integer({ description, ...extra })
const bool = (description: string, extra: Options = {}) => Type.Boolean({ description, ...extra })
const obj = <P extends TProperties>(description: string, properties: P, extra: Options = {}): TObject<P> =>
  Type.Object(properties, { description, additionalProperties: false, ...extra })

/** A string out of a fixed list, as JSON Schema `enum` (its error names the allowed values; a union of literals would not). */
function oneOf<const V extends readonly string[]> (values: V, description: string, extra: Options = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], description, ...extra })
}

/** An object of free keys, each a `value` (JSON Schema `additionalProperties`; TypeBox's Record would write patterns). */
function map<V extends TSchema> (description: string, value: V, extra: Options = {}): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>({ type: 'object', description, additionalProperties: value, ...extra })
}

const ORG_ID = '^org_[A-Za-z0-9_-]{1,64}$'
const SCOPE_NAME = '^[a-z][a-z0-9_-]*:[a-z0-9_.-]+$'

/** One policy in a chain: `{ <policy name>: <options> }`; the options are checked by the policy's own schema. */
const policyEntry = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  description: 'One policy: `{ <policy name>: <options object> }`.',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: { type: ['object', 'null'], description: 'The policy\'s options (checked by the policy\'s own schema).' },
})

export type PolicyEntry = Static<typeof policyEntry>

/** JSON Schema of a policy chain (a list of `{ <policy>: <options> }`); services whose routes come from their settings embed it. */
export const policyChain = (description: string) => Type.Array(policyEntry, { description, default: [] })

/**
 * One `routes:` entry: a policy chain, or (services whose routes come from settings) an object holding one. Its
 * schema is the service's (`ServiceSchema.routeEntry`), so only the part every service shares is typed here.
 */
export type RouteEntry = PolicyEntry[] | { readonly policies: PolicyEntry[], readonly [key: string]: unknown }

/**
 * What the first pass needs to know of a service: its block's own settings and, for a service whose route list
 * comes from its settings, the shape of one `routes:` entry. Passed in by the pipeline, so config/ never imports
 * services.
 */
export interface ServiceSchema {
  readonly name: string
  readonly description: string
  /** JSON Schema properties of the keys the service adds beside prefix, envelope, policies and routes. */
  readonly settings: Readonly<Record<string, Options>>
  /** Settings keys that must be present. */
  readonly required?: readonly string[]
  /** JSON Schema of one `routes:` entry; default: a policy chain. It must hold the route's chain under `policies`. */
  readonly routeEntry?: Options
  /** A service type: blocks of any name select it with `type: <name>` (its settings declare `type`). */
  readonly typed?: boolean
}

const windowLimit = (description: string, points: number, windowSeconds: number) => obj(description, {
  points: int('Requests (or failures) allowed per window.', { minimum: 1, default: points }),
  window_seconds: int('Window length in seconds.', { minimum: 1, maximum: 86400, default: windowSeconds }),
}, { default: {} })

const connectedAccount = obj('The payment processor account that receives payments for this organization or store.', {
  id: str('Connected account hashkey, shown as connected_account_id.', { pattern: '^[A-Za-z0-9_-]{3,64}$' }),
  processor_account_id: str('The processor\'s own account id (Connect mode).', { minLength: 1 }),
})

/** TLS to a backend: the same shape under a proxy block's `upstream.tls` and a store's `lane.tls` (docs/tls.md). */
export const backendTls = obj('TLS to an https backend: a private CA, a client certificate, the name checked.', {
  ca_file: Type.Optional(str('PEM bundle of the CA(s) to trust, relative to the config file\'s folder; re-read on change.', { minLength: 1 })),
  only_ca: bool('true: trust only ca_file; false (default): ca_file in addition to the system\'s CAs.', { default: false }),
  cert_file: Type.Optional(str('Client certificate (PEM, leaf first) presented to the backend, relative to the config file\'s folder; re-read on change.', { minLength: 1 })),
  key_file: Type.Optional(str('Private key of cert_file (PEM), relative to the config file\'s folder.', { minLength: 1 })),
  servername: Type.Optional(str('SNI sent and name the backend\'s certificate must carry (default: the target URL\'s host name).', { minLength: 1 })),
  verify: bool('false: the backend\'s certificate is not verified (a warning is logged at every start and reload).', { default: true }),
})

const laneSoftware = {
  base_url: str('http(s) URL of the lane software; requests are relayed below it only.', { pattern: '^https?://' }),
  credential: Type.Optional(str('Sent to the lane as its Authorization header (the caller\'s own never is).', { minLength: 1 })),
  connect_timeout_ms: int('Connection timeout to the lane.', { minimum: 1, default: 2000 }),
  response_timeout_ms: int('Time allowed for the lane to start answering.', { minimum: 1, default: 15000 }),
  max_sockets: int('Keep-alive sockets per lane, and so the lane\'s concurrency cap.', { minimum: 1, maximum: 1024, default: 32 }),
  tls: Type.Optional(backendTls),
}

const lane = obj('The lane software of a store.', {
  ...laneSoftware,
  next: Type.Optional(obj('A new version of the store\'s lane software (the same keys): the live proxy sends a request there when `services.live.split` chooses `next` (docs/data-exchange.md); fan-out keeps the lane above.', laneSoftware)),
})

const store = obj('A store organization of this organization.', {
  id: str('Store organization id (org_…).', { pattern: ORG_ID }),
  name: str('Display name.', { default: '' }),
  install_active: bool('Whether the store has an active install; inactive stores answer 404 store_not_found.', { default: true }),
  connected_account: Type.Optional(connectedAccount),
  lane: Type.Optional(lane),
})

const organization = obj('An organization (e.g. an HQ) and the stores it owns.', {
  id: str('Organization id (org_…).', { pattern: ORG_ID }),
  name: str('Display name.', { default: '' }),
  parent: Type.Optional(str('Parent organization id; the parent\'s callers reach this organization too.', { pattern: ORG_ID })),
  connected_account: Type.Optional(connectedAccount),
  stores: Type.Array(store, { description: 'Stores owned by this organization.', default: [] }),
})

const hashedSecret = (description: string, hash: string) => obj(description, {
  hash: str(hash),
  created: str('Issue date, YYYY-MM-DD; `lanegate validate` warns when older than issuer.secret_max_age_days.', { pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
})

const serviceAccount = obj('A service account that obtains tokens with the client-credentials grant.', {
  client_id: str('Client identifier.', { pattern: '^[A-Za-z0-9._-]{1,128}$' }),
  name: str('Display name.', { default: '' }),
  secrets: Type.Array(hashedSecret('One hashed secret.', 'PHC string printed by `lanegate hash-secret`.'), {
    description: 'Hashed secrets (several during rotation).',
    minItems: 1,
  }),
  api_keys: Type.Array(hashedSecret('One hashed API key.', 'PHC string printed by `lanegate hash-secret` (the key itself is never written here).'), {
    description: 'Hashed API keys (the `api-key` policy): a key gives the same principal as this account\'s token. Several during rotation.',
    default: [],
  }),
  scopes: Type.Array(str('A scope name.'), { description: 'Scopes this account may be granted.', uniqueItems: true }),
  organization: str('Organization the account acts for (token claim organization_id).', { pattern: ORG_ID }),
  token_type: oneOf(['service'], 'Type of token issued (service accounts issue service tokens).', { default: 'service' }),
  status: oneOf(['active', 'revoked'], 'A revoked account gets 401 invalid_client and its tokens stop working at the next reload.', { default: 'active' }),
})

/** A claim named by its path: `scope`, or `realm_access.roles` for a claim inside an object claim. */
const claimPath = (description: string, extra: Options = {}) => str(description, { ...extra, pattern: '^[^.\\s]+(\\.[^.\\s]+)*$' })

const scopeSource = obj('Where scopes are read: a string claim split on `separator`, or an array of strings.', {
  claim: claimPath('Claim path holding the scopes (`scope`, `scp`, `realm_access.roles`).'),
  separator: Type.Optional(str('Separator of a string claim; default a space.', { minLength: 1 })),
})

const issuerClaims = obj('How this issuer\'s claims become the caller: for identity providers whose tokens do not carry lanegate\'s own claims (organization_id, token_type). Without it, tokens must be in lanegate\'s own profile.', {
  subject: Type.Optional(claimPath('Claim path of the subject; default `sub` (a token without one, such as a client-credentials token, takes its client id).')),
  client_id: Type.Optional(claimPath('Claim path of the client id (`client_id`, `azp`, `appid`, `cid`); default `client_id`.')),
  token_id: Type.Optional(claimPath('Claim path of the token id (`jti`, `uti`); default `jti`; a token without one has an empty id.')),
  scopes: Type.Union([scopeSource, Type.Array(scopeSource, { minItems: 1 })], { description: 'One scope source or a list of them (their scopes are joined).' }),
  organization: Type.Union([
    obj('The organization read from a claim.', {
      claim: claimPath('Claim path of the organization id (`tid`, `tenant`).'),
      map: Type.Optional(map('Claim value -> organization id, for providers whose tenant ids are not lanegate\'s (Entra ID\'s tid); a value not listed is refused.', str('An organization id.', { pattern: ORG_ID }), { minProperties: 1 })),
    }),
    obj('Every token of this issuer belongs to one organization.', { const: str('The organization id.', { pattern: ORG_ID }) }),
  ], { description: 'The organization whose tree the caller may reach.' }),
  token_type: Type.Union([
    oneOf(['user', 'service'], 'Every token of this issuer is of this type.'),
    obj('The type read from a claim whose values are mapped.', {
      claim: claimPath('Claim path deciding the type.'),
      map: map('Claim value -> token type; a value not listed is refused.', oneOf(['user', 'service'], 'A token type.'), { minProperties: 1 }),
    }),
  ], { description: 'user or service, fixed or read from a claim.' }),
})

const userTokenIssuer = obj('An external issuer of user tokens that the gateway trusts.', {
  issuer: str('Expected iss claim.', { minLength: 1 }),
  audience: str('Expected aud claim.', { minLength: 1 }),
  algorithms: Type.Array(oneOf(['EdDSA', 'ES256', 'ES384', 'RS256', 'PS256'], 'A JWS algorithm.'), {
    description: 'Accepted signing algorithms.',
    minItems: 1,
    default: ['EdDSA', 'ES256', 'RS256'],
  }),
  jwks: Type.Optional(obj('Inline public keys.', {
    keys: Type.Array(Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'A public JWK.' }), { description: 'JWKs.' }),
  })),
  jwks_uri: Type.Optional(str('URL of the issuer\'s JWKS (cached, refetched at most every 30 s on unknown kid).', { pattern: '^https?://' })),
  discovery_url: Type.Optional(str('OpenID Connect discovery document (`.../.well-known/openid-configuration`): its jwks_uri is used, fetched on first use and again every hour; its issuer must equal `issuer`.', { pattern: '^https?://' })),
  accept_typ: Type.Optional(Type.Array(oneOf(['at+jwt', 'JWT'], 'A JWT `typ` header value (`application/` prefix allowed).'), {
    description: 'Accepted `typ` headers; default [at+jwt] (RFC 9068); add JWT for providers that mark access tokens so (Keycloak, Entra ID, Okta).',
    minItems: 1,
  })),
  claims: Type.Optional(issuerClaims),
  introspection: Type.Optional(obj('Opaque tokens of this issuer, checked by token introspection (RFC 7662); needs `claims`. At most one issuer may have it: an opaque token names no issuer.', {
    url: str('The introspection endpoint.', { pattern: '^https?://' }),
    client_id: str('The gateway\'s client id at the provider (HTTP Basic authentication).', { minLength: 1 }),
    client_secret: str('Its secret; write it as ${ENV_VAR}.', { minLength: 1 }),
    cache_seconds: int('How long an active answer is reused (never past the token\'s exp).', { minimum: 0, maximum: 3600, default: 60 }),
    timeout_ms: int('How long the gateway waits for the endpoint before answering 503 auth_unavailable.', { minimum: 100, maximum: 30000, default: 3000 }),
  })),
  development_key_dir: Type.Optional(str('Development issuer: a key pair generated under this directory (relative to server.data_dir); `lanegate user-token` signs with it.')),
  max_token_lifetime_seconds: int('Longest accepted user-token lifetime (exp - iat, seconds); longer-lived tokens get 401.', { minimum: 60, maximum: 2592000, default: 86400 }),
})

/** The keys every service block has, whatever its service: its settings come beside them (`ServiceSchema.settings`). */
const serviceBlockBase = (description: string, routeEntry: Options | undefined) => ({
  prefix: str('Path prefix of every route of the service.', { pattern: '^(/[A-Za-z0-9._~-]+)+$' }),
  envelope: oneOf(envelopeNames, 'Error body shape of the service.'),
  policies: policyChain('Policies run on every route of the service, before the route\'s own.'),
  routes: Type.Unsafe<Record<string, RouteEntry>>({
    type: 'object',
    description,
    additionalProperties: routeEntry ?? policyChain('The route\'s own policies.'),
    default: {},
  }),
})

/** The shared part of a service block, for `config/types.ts` (a block's settings are typed by its service). */
export const serviceBlockShape = Type.Object(serviceBlockBase('', undefined))

/**
 * The schema of one service block: prefix, envelope, policies, routes, and the service's own settings (JSON Schema
 * from the service module, so the object is assembled here rather than by `Type.Object`, which would require every
 * setting not marked optional in TypeBox's own way).
 */
function serviceBlock (service: ServiceSchema): Options {
  return {
    type: 'object',
    description: service.description,
    properties: {
      ...serviceBlockBase('Route id → the route\'s own policies. Routes not listed are not served.', service.routeEntry),
      ...service.settings,
    },
    required: ['prefix', 'envelope', ...(service.required ?? [])],
    additionalProperties: false,
  }
}

const server = obj('The HTTP listener.', {
  host: str('Address to listen on.', { default: '0.0.0.0' }),
  port: int('Port to listen on.', { minimum: 0, maximum: 65535, default: 8080 }),
  trusted_proxies: Type.Array(str('IP or CIDR.'), { description: 'Addresses or CIDRs of load balancers whose X-Forwarded-For is believed.', default: [] }),
  body_limit_bytes: int('Largest request body accepted (413 above).', { minimum: 1, default: 1048576 }),
  max_header_bytes: int('Largest request head accepted (431 above).', { minimum: 1024, maximum: 65536, default: 16384 }),
  request_timeout_ms: int('Time allowed to receive a whole request.', { minimum: 1, default: 30000 }),
  headers_timeout_ms: int('Time allowed to receive the request head (slowloris brake).', { minimum: 1, default: 10000 }),
  keep_alive_timeout_ms: int('Idle keep-alive connection lifetime.', { minimum: 1, default: 5000 }),
  shutdown_grace_ms: int('On SIGTERM, how long in-flight requests may finish.', { minimum: 0, default: 10000 }),
  startup_timeout_ms: int('At start, how long PostgreSQL and the rate-limit Redis are retried before exiting 1.', { minimum: 1, default: 30000 }),
  log_level: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'pino log level.', { default: 'info' }),
  data_dir: str('Directory for the SQLite file and generated keys (relative to the config file\'s folder).', { default: './data' }),
  workers: Type.Union([Type.Integer({ minimum: 1, maximum: 256 }), Type.Unsafe<'auto'>({ type: 'string', enum: ['auto'] })], {
    description: 'Worker processes serving the port (node:cluster), each a whole gateway: a count, or auto (one per core). 1 runs no cluster.',
    default: 1,
  }),
  tls: Type.Optional(obj('HTTPS: the listener\'s certificate and key (absent: plain HTTP). Rotated without a restart when the files change or on SIGHUP.', {
    cert_file: str('PEM certificate chain, leaf first then intermediates, relative to the config file\'s folder.', { minLength: 1 }),
    key_file: str('PEM private key of the certificate, relative to the config file\'s folder.', { minLength: 1 }),
    min_version: oneOf(['TLSv1.2', 'TLSv1.3'], 'Oldest TLS version accepted.', { default: 'TLSv1.2' }),
    client_ca_file: Type.Optional(str('Ask callers for a certificate signed by this CA (PEM); the client-certificate policy checks it.', { minLength: 1 })),
  })),
  http2: bool('ALPN h2 on the TLS listener (HTTP/1.1 still served); needs server.tls.', { default: false }),
}, { default: {} })

const admin = Type.Union([
  Type.Literal(false, { description: 'No admin listener, no metrics collected.' }),
  obj('Where the admin listener listens (defaults: 127.0.0.1, 9464).', {
    host: Type.Optional(str('Address of the admin listener (default 127.0.0.1: keep it off public networks).')),
    port: Type.Optional(int('Port of the admin listener (default 9464; 0 picks a free port).', { minimum: 0, maximum: 65535 })),
    auth: Type.Optional(obj('Who may use the admin listener (the console, its JSON endpoints and /metrics; /healthz and /readyz stay open for probes). Required when host is not a loopback address.', {
      token_env: Type.Optional(str('Name of the environment variable holding the bearer token (`Authorization: Bearer <token>`, at least 16 characters); read at start, never written to the config.', { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
      basic: Type.Optional(obj('HTTP Basic: a user name and a scrypt hash of the password (`lanegate hash-secret`).', {
        user: str('The user name.', { minLength: 1, pattern: '^[^:]+$' }),
        password_hash: str('scrypt PHC hash of the password, as `lanegate hash-secret` prints it (never the password itself).'),
      })),
    }, { minProperties: 1, maxProperties: 1 })),
  }),
], { description: 'The admin listener serving the operator console (/), /metrics (Prometheus), /healthz and /readyz; false turns it and metrics off.' })

const storage = obj('Where payment intents, idempotency keys and dispatches are kept.', {
  driver: oneOf(['sqlite', 'postgres'], 'sqlite (embedded default) or postgres (several gateway instances).', { default: 'sqlite' }),
  sqlite_file: str('SQLite file, relative to server.data_dir.', { default: 'lanegate.db' }),
  postgres_url: Type.Optional(str('postgres://… connection string (driver postgres).')),
  postgres_schema: Type.Optional(str('PostgreSQL schema of the tables (created when missing); default: the server\'s search_path (public).', { pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
}, { default: {} })

const rateLimitStore = obj('Where rate-limit counters are kept.', {
  driver: oneOf(['memory', 'redis'], 'memory (one instance) or redis (shared by instances).', { default: 'memory' }),
  redis_url: Type.Optional(str('redis://… URL (driver redis).')),
  key_prefix: str('Prefix of the counter keys.', { default: 'lanegate' }),
  on_store_error: oneOf(['open', 'closed'], 'When the counter store fails: open lets requests through without limit headers, closed answers 503.', { default: 'open' }),
  sync_interval_ms: int('Driver redis (or memory with server.workers > 1): 0 (default) sends every counted request to Redis, or to the primary process (exact); 1–10000 pre-counts route limits in each instance (worker) and synchronises with Redis (the primary) every this many ms (no round trip per request; over-admission bounded as docs/performance.md says).', { minimum: 0, maximum: 10_000, default: 0 }),
}, { default: {} })

const issuer = obj('The OAuth 2.0 token issuer.', {
  // Optional here, filled by the loader after validation (config/default-issuer.ts): types.ts makes it required.
  issuer: Type.Optional(str('iss of issued tokens and the RFC 8414 issuer identifier; default http://localhost:<server.port>, https:// when server.tls is set.', { pattern: '^https?://' })),
  audience: str('aud of issued tokens; every bearer token must carry it.', { minLength: 1, default: 'lanegate' }),
  behind_proxy: bool('true: issuer.issuer is the address of a load balancer or proxy in front of this gateway (several instances share it), so the start-up warning that it names another port than the one this gateway listens on is not given.', { default: false }),
  algorithm: oneOf(['EdDSA', 'ES256', 'RS256'], 'Signing algorithm of generated keys.', { default: 'EdDSA' }),
  key_dir: str('Signing keys directory, relative to server.data_dir.', { default: 'keys' }),
  default_lifetime_seconds: int('Token lifetime when no granted scope sets one.', { minimum: 60, maximum: 604800, default: 3600 }),
  scope_lifetimes: map('Scope → lifetime in seconds; a token gets the shortest among its scopes.', Type.Integer({ minimum: 60, maximum: 604800, description: 'Seconds.' }), { default: {} }),
  clock_tolerance_seconds: int('Leeway for exp/nbf checks.', { minimum: 0, maximum: 300, default: 5 }),
  token_rate_limit: windowLimit('Token requests per client id (counted once the client authenticated).', 60, 60),
  failed_auth_limit: windowLimit('Failed client authentications per IP before 429.', 20, 60),
  secret_max_age_days: int('Secrets older than this are warned about by `lanegate validate`.', { minimum: 1, default: 90 }),
}, { default: {} })

const rateLimit = obj('A rate limit.', {
  key: oneOf(['ip', 'client', 'organization'], 'What is counted: the client IP (IPv6 per /64), the token\'s client id, or its organization.'),
  points: int('Requests allowed per window.', { minimum: 1 }),
  window_seconds: int('Window length in seconds.', { minimum: 1, maximum: 86400 }),
})

/** Every section but `services:` (whose blocks' settings come from the service modules, see `buildConfigSchema`). */
const sections = {
  plugins: Type.Array(str('A module path (./policies/x.js) or a package name.', { minLength: 1 }), {
    description: 'Outside policy plugins: module paths relative to this file\'s folder, or package names. Loaded at start; a change needs a restart.',
    uniqueItems: true,
    default: [],
  }),
  server,
  admin: Type.Optional(admin),
  storage,
  rate_limit_store: rateLimitStore,
  cache_store: obj('Memory of the `cache` policy, shared by every route that uses it; emptied by every reload.', {
    max_bytes: int('Most bytes of cached answers (bodies, headers and keys) kept in memory; the least recently used go first.', { minimum: 1024, maximum: 4_294_967_296, default: 67_108_864 }),
  }, { default: {} }),
  issuer,
  scopes: map('Every scope the gateway knows.', obj('A scope.', { description: str('What the scope grants.') }), { propertyNames: { pattern: SCOPE_NAME } }),
  organizations: Type.Array(organization, { description: 'Organizations and their stores.', default: [] }),
  service_accounts: Type.Array(serviceAccount, { description: 'Clients of the token endpoint.', default: [] }),
  user_token_issuers: Type.Array(userTokenIssuer, { description: 'Trusted issuers of user tokens.', default: [] }),
  rate_limits: map('Named rate limits; routes that name the same limit share its counters.', rateLimit, { default: {} }),
  access_log: Type.Optional(accessLog),
  telemetry: Type.Optional(telemetry),
}

/** The config's sections but `services:`, for `config/types.ts` (a service block is typed by `serviceBlockShape`). */
export const configSections = Type.Object(sections)

/**
 * Builds the whole-file schema, including each known service's own settings. Fixed services are keys of
 * `services:`; a block under any other name is an instance of the service type its `type` selects. One service
 * type is supported by this build's schema (a second would need a discriminator); more is a programming error.
 */
export function buildConfigSchema (services: readonly ServiceSchema[]): TObject {
  const serviceProperties: Record<string, Options> = {}
  for (const service of services.filter((s) => s.typed !== true)) serviceProperties[service.name] = serviceBlock(service)
  const types = services.filter((s) => s.typed === true)
  if (types.length > 1) throw new Error(`one service type is supported, not ${types.length}: ${types.map((s) => s.name).join(', ')}`)
  const typed = types[0]
  const servicesExtra: Options = typed === undefined ? { default: {} } : { default: {}, additionalProperties: serviceBlock({ ...typed, required: ['type', ...(typed.required ?? [])] }) }
  const servicesSchema = Type.Unsafe({
    type: 'object',
    description: 'Services the gateway serves; a service not listed is not served. A block under another name than a fixed service\'s is a service of the type its `type` names (`type: proxy`).',
    properties: serviceProperties,
    additionalProperties: false,
    ...servicesExtra,
  })
  return obj('lanegate configuration', { ...sections, services: servicesSchema })
}
