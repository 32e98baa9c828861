/**
 * `lanegate/plugin/testing`: runs ONE policy the way a route runs it — options validated and defaulted by its
 * schema, `check` against a real config, the step built by `create` with a real context and run by the gateway's
 * chain runner, refusals rendered by the gateway's error handler in the envelope you choose — in a bare fastify
 * app you `inject` requests into. No token issuer, store or services are started.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction, type InjectOptions } from 'fastify'
import type { Response } from 'light-my-request'
import { buildIndexes } from './config/indexes.js'
import { createErrorHandler } from './errors/error-handler.js'
import type { EnvelopeName } from './errors/envelopes.js'
import { runSteps } from './pipeline/chain-runner.js'
import { parseGatewayConfig } from './pipeline/load-gateway-config.js'
import type { PolicyPlugin } from './pipeline/policy.js'
import { policyContext } from './pipeline/policy-context.js'
import { policyOptions } from './pipeline/policy-options.js'
import { catalog } from './pipeline/registry.js'
import { createLimiterRegistry } from './runtime/limiter-registry.js'
import type { Principal } from './runtime/request-context.js'
import type { SharedResources } from './runtime/shared-resources.js'
import type { Snapshot } from './runtime/snapshot.js'

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
}

export interface PolicyHarness {
  app: FastifyInstance
  /** Sends a request through the policy; a request that passes answers 200 `{ok: true, headers: <request headers>}`. */
  inject (request: InjectOptions | string): Promise<Response>
  close (): Promise<void>
}

/** Builds the harness; throws when the options or `check` refuse (with the same messages `validate` prints). */
export async function testPolicy<Options> (plugin: PolicyPlugin<Options>, options: unknown, harness: PolicyHarnessOptions = {}): Promise<PolicyHarness> {
  const plugins = new Map(catalog.plugins)
  plugins.set(plugin.name, plugin)
  const { config } = await parseGatewayConfig(harness.config ?? MINIMAL_CONFIG, 'policy-test.yaml', { env: {} }, { ...catalog, plugins })
  const indexes = buildIndexes(config)
  const validated = policyOptions(plugin, options)
  const problems = plugin.check?.(validated, config, indexes) ?? []
  if (problems.length > 0) throw new Error(`policy "${plugin.name}": ${problems.map((p) => `${p.path || '(options)'}: ${p.message}`).join('; ')}`)

  const app = Fastify({ logger: false, trustProxy: config.server.trusted_proxies.length > 0 ? config.server.trusted_proxies : false })
  const limiters = createLimiterRegistry(config.rate_limit_store)
  // Cast: a single policy in a bare app needs only the logger and limiters; the rest of SharedResources is the gateway's.
  const shared = { logger: app.log, limiters } as unknown as SharedResources
  const envelope = harness.envelope ?? 'plain'
  const snapshot: Snapshot = { version: 1, config, indexes, chains: new Map() }
  const step = plugin.create(validated, policyContext(plugin, { config, indexes, shared, service: 'test', routeId: 'test', envelope }))
  const chain = [step]
  app.decorateRequest('gw', null as never)
  app.setErrorHandler(createErrorHandler(envelope))
  app.route({
    method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: harness.url ?? '/test',
    onRequest: function runPolicy (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      request.gw = { snapshot, service: 'test', routeId: 'test', envelope, principal: harness.principal }
      runSteps(chain, 0, request, reply, done)
    },
    handler: async function passed (request: FastifyRequest, reply: FastifyReply) {
      return harness.handler === undefined ? { ok: true, headers: request.headers } : harness.handler(request, reply)
    },
  })
  app.addHook('onClose', async () => { await limiters.close() })
  await app.ready()
  return {
    app,
    inject: async (request) => app.inject(request as InjectOptions),
    close: async () => { await app.close() },
  }
}
