import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction } from 'fastify'
import pino from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import type { GatewayConfig, UserTokenIssuerConfig } from '../../src/config/types.js'
import type { EnvelopeName } from '../../src/plugin/envelope-name.js'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { policyContext } from '../../src/plugin/context.js'
import { policyOptions } from '../../src/plugin/options.js'
import type { PolicyPlugin, PolicyStep } from '../../src/plugin/policy.js'
import { runSteps } from '../../src/plugin/run-steps.js'
import { policyViews } from '../../src/pipeline/policy-views.js'
import type { LimiterRegistry, SharedResources } from '../../src/runtime/shared-resources.js'
import { createSharedUpstreams } from '../../src/upstream/registry.js'
import type { Store } from '../../src/store/store.js'
import { createTokenVerifier } from '../../src/auth/token-verifier.js'
import { createApiKeyVerifier } from '../../src/auth/api-key-verifier.js'
import type { DevUserIssuerLoader } from '../../src/auth/token-profiles.js'
import { createLimiterRegistry } from '../../src/limits/limiter-registry.js'
import { snapshotOf, testConfig } from './token-config.js'
import { generateTestKey, keyStoreOf, type TestKey } from './token-mint.js'

/** Keys, config, snapshot and shared resources for one policy test. */
export interface TokenEnv {
  serviceKey: TestKey
  userKey: TestKey
  config: GatewayConfig
  snapshot: Snapshot
  shared: SharedResources
}

export interface TokenEnvOptions {
  limiters?: LimiterRegistry
  extraIssuers?: UserTokenIssuerConfig[]
  devUserIssuer?: DevUserIssuerLoader
  /** Changes to the config before the snapshot is built. */
  edit?: (config: GatewayConfig) => void
}

export const silentLogger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger

export async function tokenEnv (options: TokenEnvOptions = {}): Promise<TokenEnv> {
  const serviceKey = await generateTestKey('gw-key-1')
  const userKey = await generateTestKey('user-key-1')
  const config = testConfig({ keys: [userKey.publicJwk] }, options.extraIssuers)
  options.edit?.(config)
  const keys = keyStoreOf(serviceKey)
  const shared: SharedResources = {
    logger: silentLogger,
    keys,
    tokens: createTokenVerifier({ keys, logger: silentLogger, devUserIssuer: options.devUserIssuer }),
    apiKeys: createApiKeyVerifier(),
    limiters: options.limiters ?? createLimiterRegistry(config.rate_limit_store),
    // Policies never touch the store.
    store: { close: async () => {} } as unknown as Store,
    upstreams: createSharedUpstreams(),
  }
  return { serviceKey, userKey, config, snapshot: snapshotOf(config), shared }
}

/** One policy in a route's chain. */
export type ChainEntry = readonly [PolicyPlugin, unknown]

export interface PolicyRoute {
  url: string
  method?: 'GET' | 'POST'
  chain: ChainEntry[]
}

export interface PolicyAppOptions {
  env: TokenEnv
  routes: PolicyRoute[]
  envelope?: EnvelopeName
  /** fastify's `trustProxy` (the gateway sets it from server.trusted_proxies); default off. */
  trustProxy?: string[]
}

/** A bare fastify app running policy chains the way the gateway does, plus a way to swap the snapshot. */
export interface PolicyApp {
  app: FastifyInstance
  setSnapshot (snapshot: Snapshot): void
}

/**
 * Builds a bare app: each route's onRequest sets `request.gw` by hand and runs its steps with the gateway's own
 * runner (a refusal, returned or thrown, ends the chain as in a route); the handler answers
 * `{ok:true, principal}`. Errors go through the gateway's error handler.
 */
export function buildPolicyApp (options: PolicyAppOptions): PolicyApp {
  const envelope = options.envelope ?? 'plain'
  let snapshot = options.env.snapshot
  const app = Fastify({ logger: false, trustProxy: options.trustProxy ?? false })
  app.decorateRequest('gw', null as unknown as FastifyRequest['gw'])
  app.setErrorHandler(createErrorHandler())
  // As the gateway does, each snapshot has its own steps (built by `create` with that snapshot's config and views).
  const stepsOf = (route: PolicyRoute): PolicyStep[] => route.chain.map(([plugin, pluginOptions]) => plugin.create(policyOptions(plugin, pluginOptions), policyContext(plugin, {
    ...policyViews(options.env.shared, snapshot.config, snapshot.indexes),
    service: 'test',
    routeId: route.url,
    envelope,
  })))
  const chains = new Map<PolicyRoute, PolicyStep[]>(options.routes.map((route) => [route, stepsOf(route)]))
  for (const route of options.routes) {
    const routeId = route.url
    app.route({
      method: route.method ?? 'GET',
      url: route.url,
      onRequest: function runChain (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
        request.gw = { snapshot, service: 'test', routeId, envelope }
        runSteps(chains.get(route) ?? [], 0, request, reply, done)
      },
      handler: async function answer (request: FastifyRequest) {
        const principal = request.gw.principal
        return { ok: true, principal: principal === undefined ? null : { ...principal, scopes: [...principal.scopes].sort() } }
      },
    })
  }
  return {
    app,
    setSnapshot: (next) => {
      snapshot = next
      for (const route of options.routes) chains.set(route, stepsOf(route))
    },
  }
}
