import type { FastifyReply, FastifyRequest } from 'fastify'
import type { EnvelopeName } from './envelope-name.js'
import type { ClientCertificate } from './client-certificate.js'
import type { ConnectionSlots } from './connection-slots.js'
import type { ErrorCode } from './catalogue.js'
import type { ErrorFields } from './gateway-error.js'
import type { GatewaySettings, StoreReach } from './gateway-settings.js'
import type { LimiterHandle } from './limiter.js'
import type { Principal } from './request-state.js'
import type { ResponseHeadHook, ResponseSentHook } from './response-phase.js'
import type { ResponseBodyHook } from './body-hook.js'
import type { RequestBodyOptions } from './body-phase.js'
import type { PolicyStep, Refusal, StepOutcome } from './step.js'
import type { TokenVerifierView } from './tokens.js'
import type { ApiKeyVerifierView } from './api-keys.js'

export type { PolicyStep, Refusal, StepOutcome }

/**
 * The policy contract (`lanegate/plugin` re-exports it). Its names are kept across releases: a
 * plugin written against one release still loads after the next.
 */

/** An error code a policy declares in its own `errors` map: the status and default message it answers with. */
export interface DeclaredError {
  readonly status: number
  readonly message: string
}

/** What `context.refuse` may add to the code's default answer. */
export interface RefuseOptions {
  /** Replaces the code's default message. */
  message?: string
  /** Response headers sent with the refusal (e.g. `Retry-After`). */
  headers?: Record<string, string>
  /** Extra body fields, rendered by the route's envelope (e.g. `retry_after`). */
  fields?: ErrorFields
  /** The named rate limit that refused the request: a metrics label (`lanegate_rate_limited_total`), never rendered. */
  limit?: string
}

/** What a policy's `create` may use. One context per route per config snapshot. */
export interface PolicyContext<Codes extends string = string> {
  /** What the policy may read of the validated gateway.yaml; one object per config snapshot. */
  readonly settings: GatewaySettings
  /** The gateway's bearer-token verifier for this route's config (how `auth` verifies; an auth-like policy may too). */
  readonly tokens: TokenVerifierView
  /** The gateway's API key verifier for this route's config (how `api-key` verifies keys). */
  readonly apiKeys: ApiKeyVerifierView
  /**
   * The counter of the named limit of gateway.yaml's `rate_limits` (throws for an unknown name: `check` it). The same
   * name and settings give the same counter across reloads, so counts survive a reload.
   */
  limiter (name: string): LimiterHandle
  readonly service: string
  readonly routeId: string
  readonly envelope: EnvelopeName
  /**
   * Whether the route may be upgraded to a WebSocket (docs/websocket.md): then a browser, which cannot set
   * `Authorization` on a WebSocket, may send its bearer token as the `access_token` query parameter.
   */
  readonly websocket?: boolean
  /**
   * The request body limit of the route's service, when it relays bodies and sets one (`max_body_bytes` of a
   * `proxy` block or of the live service): what a policy that reads a body may buffer at most.
   */
  readonly serviceBodyLimit?: number
  /**
   * Open-connection counts held for the host (a Map in one process, the primary's under `server.workers` > 1), for
   * policies that bound connections rather than requests (`connection-limit`).
   */
  readonly connectionSlots: ConnectionSlots
  /**
   * A refusal for a code of the policy's own `errors` map, or a catalogued code (docs/errors.md). Return it from
   * the step; the route's envelope renders it.
   */
  refuse (code: Codes | ErrorCode, options?: RefuseOptions): Refusal
  /** The authenticated caller, or undefined when no `auth` step (or other auth-like policy) ran before this one. */
  principal (request: FastifyRequest): Principal | undefined
  /**
   * Sets the authenticated caller of `request`, for an auth-like policy: later steps (`scope`, `organization`,
   * `rate-limit` by client) and the services see it as they see a bearer token's.
   */
  setPrincipal (request: FastifyRequest, principal: Principal): void
  /**
   * Whether a caller of `organizationId` reaches the organization or store `id` as far as `needs` (the store-access
   * rule, `settings.reach`), for a policy that guards one (`organization`). When it does, the answer is kept on the
   * request, so the route's service reads it instead of deciding again.
   */
  reachStore (request: FastifyRequest, organizationId: string, id: string, needs: Exclude<StoreReach, 'outside'>): boolean
  /**
   * A complete answer (status, headers and an optional body of at most `RESPONSE_BODY_LIMIT` bytes), returned by the
   * step like a refusal; it ends the chain. For policies that answer a request themselves, e.g. `cors` answering a
   * preflight with 204.
   */
  answer (status: number, headers: Record<string, string>, body?: string | Buffer): Refusal
  /**
   * Response phase: `hook` runs for this request's answer just before its status and headers are written (an
   * in-process answer, a refusal, or a relayed answer's head). Register it from the step; build `hook` in `create`.
   */
  onResponseHead (reply: FastifyReply, hook: ResponseHeadHook): void
  /** Response phase: `hook` runs once this request's answer is sent (or its connection closed). */
  onResponseSent (reply: FastifyReply, hook: ResponseSentHook): void
  /**
   * Body phase: the caller's whole body, at most `limit` bytes (undefined when larger: refuse `payload_too_large`),
   * left in the request stream for whoever reads it next. Call it only for a request that declares a body.
   */
  readRequestBody (request: FastifyRequest, limit: number): Promise<Buffer | undefined>
  /**
   * Body phase: on a relayed route (live, `type: proxy`), `body` is sent upstream instead of the caller's body
   * (`content-length` is set to its size), with `options.contentType` and by `options.method` when given.
   */
  setRequestBody (request: FastifyRequest, body: Buffer, options?: RequestBodyOptions): void
  /**
   * Body phase: on a relayed route, the upstream's answer is read whole (at most `maxBodyBytes`, else 502
   * `upstream_error` with `upstream_failure: too_large`) and `hook` decides what the caller gets. Build `hook` in
   * `create`.
   */
  onResponseBody (reply: FastifyReply, hook: ResponseBodyHook, maxBodyBytes: number): void
  /**
   * The caller's certificate, verified in the TLS handshake against `server.tls.client_ca_file` (mutual TLS), or
   * undefined: plain HTTP, no `client_ca_file`, no certificate sent, or one that CA did not sign.
   */
  clientCertificate (request: FastifyRequest): ClientCertificate | undefined
}

/** The request `explain` reasons about: a caller (as `auth` would establish it) and a matched route. */
export interface ExplainRequest {
  /** What the policy may read of the config explained. */
  readonly settings: GatewaySettings
  readonly service: string
  readonly routeId: string
  readonly method: string
  /** The path without the query string. */
  readonly path: string
  /** Path parameters as the router matched them. */
  readonly params: Readonly<Record<string, string>>
  /**
   * True when the route is explained for every value of its path parameters (the console's answer per route for a
   * pasted token): `params` is then empty, and a step that reads one answers `depends`.
   */
  readonly anyParams?: boolean
  /** The caller a valid token of this client would give; undefined when no caller is named. */
  readonly caller: Principal | undefined
  /** Whether an `auth` step ran earlier in the chain (`context.principal` is undefined otherwise). */
  readonly authenticated: boolean
}

/** What a policy's `explain` says its step would do. */
export interface Explanation {
  /** `pass`: goes on; `refuse`: ends the chain with `status`/`code`; `depends`: cannot be known statically. */
  readonly outcome: 'pass' | 'refuse' | 'depends'
  readonly status?: number
  readonly code?: string
  /** One line saying why (or what it depends on). */
  readonly note: string
}

/** Where a checked chain is in gateway.yaml: `services.<service>` and, in a route's own chain, the route. */
export interface PolicyPlace {
  readonly service: string
  readonly routeId: string | undefined
}

/** A problem found in a policy's options beyond what its JSON Schema says. */
export interface PolicyOptionProblem {
  /** Path below the policy's options, e.g. `all/0`. Empty for the whole options object. */
  path: string
  message: string
}

/**
 * A policy plugin: the default export of a plugin module (built-in under `plugins/<name>/`, or named in
 * gateway.yaml's `plugins:`). `Options` is the type of its validated options (`Static<typeof schema>` with
 * TypeBox); `Codes` the codes of its `errors` map.
 */
export interface PolicyPlugin<Options = any, Codes extends string = string> { // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The YAML key in policy chains. */
  readonly name: string
  /** One sentence for docs and `lanegate routes`. */
  readonly description: string
  /** JSON Schema (draft-07, ajv) of the options object; the loader fills its defaults. */
  readonly schema: Readonly<Record<string, unknown>>
  /** Codes this policy refuses with beyond the catalogue; none may clash with a catalogued or another policy's code. */
  readonly errors?: Readonly<Record<Codes, DeclaredError>>
  /** Policies that must appear earlier in the same chain, given these options. */
  requires?(options: Options, settings: GatewaySettings): string[]
  /**
   * Policies this one stands in for in other policies' `requires`: `api-key` provides `auth` (it sets the same
   * principal with `context.setPrincipal`), so `scope` or `organization` may follow it.
   */
  readonly provides?: readonly string[]
  /**
   * Checks against the config's settings (e.g. that named scopes exist). `place` is where the chain is: its service
   * and, for a route's own chain, the route (undefined for the service's `policies:`).
   */
  check?(options: Options, settings: GatewaySettings, place?: PolicyPlace): PolicyOptionProblem[]
  /**
   * Set by a policy that answers CORS preflights (`OPTIONS` with `Access-Control-Request-Method`): for a preflight
   * of one of its routes, the gateway runs this policy's step alone (a preflight carries no credentials, so the
   * rest of the chain would refuse it) and the step must `answer` it.
   */
  readonly answersPreflight?: boolean
  /**
   * Set by a policy whose step only reads the request, the caller and the config (no counter, no store): after a
   * config reload, the gateway runs such steps again, from the new snapshot, on every WebSocket (and event stream)
   * their route has open, and closes the connections they would now refuse with 1008 (docs/websocket.md). `auth`,
   * `token-type`, `scope`, `organization` and `ip-restriction` set it; a limit (`rate-limit`) must not.
   */
  readonly recheck?: boolean
  /** One line describing what these options do (for `lanegate routes`). */
  summarize?(options: Options): string
  /**
   * Optional: each change or rule these options make, one line each, when one summary line cannot hold them all
   * (`lanegate routes --json` gives them as the link's `details`; the console lists them under the chain).
   */
  details?(options: Options): readonly string[]
  /**
   * Optional (`lanegate explain`): what the step would do for `request` without running it — no token, no store,
   * no counter. Return `depends` when the answer needs what only a real request knows (a counter, an address).
   */
  explain?(options: Options, request: ExplainRequest): Explanation
  /**
   * Optional (`/openapi.json`): the codes the step may refuse with, given these options (catalogued codes or codes
   * of `errors`). The codes of `errors` are listed without it.
   */
  refusals?(options: Options): readonly (Codes | ErrorCode)[]
  /** Builds the step. Runs once per route per snapshot: make limiters, caches and precomputed headers here. */
  create(options: Options, context: PolicyContext<Codes>): PolicyStep
}
