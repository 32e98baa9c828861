/**
 * `lanegate/plugin/testing`: runs ONE policy the way a route runs it — options validated and defaulted by its
 * schema, `check` against a real config, the step built by `create` with a real context and run by the gateway's
 * chain runner, refusals rendered by the gateway's error handler in the envelope you choose — in a bare fastify
 * app you `inject` requests into. No token issuer, store or services are started.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction, type InjectOptions } from 'fastify'
import type { Response } from 'light-my-request'
import { gatewaySettings } from '../config/gateway-settings.js'
import { buildIndexes } from '../config/indexes.js'
import { parseConfigText, type ConfigRules } from '../config/load-config.js'
import type { GatewayConfig } from '../config/types.js'
import { createErrorHandler } from '../errors/error-handler.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import { policyContext } from '../plugin/context.js'
import { localConnectionSlots } from '../plugin/connection-slots.js'
import type { LimiterHandle } from '../plugin/limiter.js'
import { policyOptions } from '../plugin/options.js'
import type { PolicyPlugin } from '../plugin/policy.js'
import type { Principal } from '../plugin/request-state.js'
import { runInProcessHeadHooks } from '../plugin/response-phase.js'
import { runSteps } from '../plugin/run-steps.js'
import type { TokenVerifierView } from '../plugin/tokens.js'
import type { ApiKeyVerifierView } from '../plugin/api-keys.js'
import { storeReacher } from './store-reacher.js'

export type { Principal }

/** The smallest gateway.yaml the harness validates your `config` additions against. */
const MINIMAL_CONFIG = 'issuer: { issuer: https://lanegate.test }\nscopes: {}\n'

export interface PolicyHarnessOptions {
  /**
   * gateway.yaml text the policy's `check` and `create` see (default: an issuer and no scopes). It is loaded by
   * the real loader, so its defaults are filled and `server.trusted_proxies` decides `request.ip`.
   */
  config?: string
  /** The route's envelope (how refusals are rendered); default `plain`. */
  envelope?: EnvelopeName
  /** The caller, as if `auth` had run before the policy; default none (`context.principal()` is undefined). */
  principal?: Principal
  /** The route's path (fastify syntax); default `/test`. Every method is served. */
  url?: string
  /** What answers a request the policy let through; default 200 `{ok: true, headers: <request headers>}`. */
  handler?: (request: FastifyRequest, reply: FastifyReply) => unknown
  /** `context.tokens`; default a verifier that refuses every token (pass `principal` to test as a caller). */
  tokens?: TokenVerifierView
  /** `context.apiKeys`; default a verifier that knows no key (pass `principal` to test as a caller). */
  apiKeys?: ApiKeyVerifierView
  /** `context.limiter(name)`; default an in-memory fixed window per named limit of `config`'s `rate_limits`. */
  limiter?: (name: string) => LimiterHandle
}

export interface PolicyHarness {
  app: FastifyInstance
  /** Sends a request through the policy; a request that passes answers 200 `{ok: true, headers: <request headers>}`. */
  inject (request: InjectOptions | string): Promise<Response>
  close (): Promise<void>
}

/**
 * The rules the harness's config is validated by: the gateway's own structure and references (config/'s passes),
 * and no services (a harness runs one policy on one route of its own, so `config` declares none).
 */
const harnessRules: ConfigRules<undefined> = {
  services: [],
  async check () { return { problems: [], warnings: [], catalog: undefined } },
}

/** Builds the harness; throws when the options or `check` refuse (with the same messages `validate` prints). */
export async function testPolicy<Options> (plugin: PolicyPlugin<Options>, options: unknown, harness: PolicyHarnessOptions = {}): Promise<PolicyHarness> {
  const { config } = await parseConfigText(harness.config ?? MINIMAL_CONFIG, 'policy-test.yaml', harnessRules, { env: {} })
  const indexes = buildIndexes(config)
  const validated = policyOptions(plugin, options)
  const settings = gatewaySettings(config)
  const problems = plugin.check?.(validated, settings) ?? []
  if (problems.length > 0) throw new Error(`policy "${plugin.name}": ${problems.map((p) => `${p.path || '(options)'}: ${p.message}`).join('; ')}`)

  const app = Fastify({ logger: false, trustProxy: config.server.trusted_proxies.length > 0 ? config.server.trusted_proxies : false })
  const envelope = harness.envelope ?? 'plain'
  // What the gateway keeps on `request.gw` beside the contract's fields (its config snapshot), for code that reads it.
  const snapshot = { version: 1, config, indexes, chains: new Map() }
  const step = plugin.create(validated, policyContext(plugin, {
    settings,
    reachStore: storeReacher(indexes),
    tokens: harness.tokens ?? refusingVerifier,
    apiKeys: harness.apiKeys ?? noKeys,
    limiter: harness.limiter ?? memoryLimiters(config),
    connectionSlots: localConnectionSlots(),
    service: 'test',
    routeId: 'test',
    envelope,
  }))
  const chain = [step]
  app.decorateRequest('gw', null as never)
  app.setErrorHandler(createErrorHandler(envelope))
  app.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: harness.url ?? '/test',
    onRequest: function runPolicy (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      const state = { snapshot, service: 'test', routeId: 'test', envelope, principal: harness.principal }
      request.gw = state
      runSteps(chain, 0, request, reply, done)
    },
    onSend: runInProcessHeadHooks,
    handler: async function passed (request: FastifyRequest, reply: FastifyReply) {
      return harness.handler === undefined ? { ok: true, headers: request.headers } : harness.handler(request, reply)
    },
  })
  await app.ready()
  return {
    app,
    inject: async (request) => app.inject(request as InjectOptions),
    close: async () => { await app.close() },
  }
}

const refusingVerifier: TokenVerifierView = {
  verify () { throw new Error('the policy harness verifies no tokens: pass `principal` to run the policy as a caller') },
}

/** A fixed window per named limit and key, in memory: enough to see a policy count, refuse and report. */
function memoryLimiters (config: GatewayConfig): (name: string) => LimiterHandle {
  const windows = new Map<string, { used: number, resetAt: number }>()
  return function limiterOf (name: string): LimiterHandle {
    const limit = config.rate_limits[name]
    if (limit === undefined) throw new Error(`unknown rate limit "${name}": define it under rate_limits in the harness's config`)
    return {
      onStoreError: 'open',
      count (key: string) {
        const now = Date.now()
        let window = windows.get(`${name}\0${key}`)
        if (window === undefined || window.resetAt <= now) {
          window = { used: 0, resetAt: now + limit.window_seconds * 1000 }
          windows.set(`${name}\0${key}`, window)
        }
        window.used++
        return { allowed: window.used <= limit.points, remaining: Math.max(0, limit.points - window.used), msBeforeReset: window.resetAt - now }
      },
    }
  }
}

/** The harness's default `context.apiKeys`: every key is unknown. */
const noKeys: ApiKeyVerifierView = {
  verify () { return 'invalid' },
}
