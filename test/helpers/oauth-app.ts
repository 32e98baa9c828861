import { rm } from 'node:fs/promises'
import { Writable } from 'node:stream'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { buildIndexes } from '../../src/config/indexes.js'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import type { GatewayConfig } from '../../src/config/types.js'
import { createErrorHandler } from '../../src/errors/error-handler.js'
import { createLogger } from '../../src/logging/logger.js'
import { createKeyStore } from '../../src/oauth/key-store.js'
import { oauthRoutes } from '../../src/oauth/routes.js'
import { createLimiterRegistry } from '../../src/limits/limiter-registry.js'
import type { KeyStore, LimiterRegistry } from '../../src/runtime/shared-resources.js'
import { buildOauthConfig } from './oauth-config.js'

export interface OauthApp {
  app: FastifyInstance
  keys: KeyStore
  /** Replaces the served config (a hot reload): later requests see the new snapshot. */
  setConfig (config: GatewayConfig): void
  config (): GatewayConfig
  close (): Promise<void>
}

export interface OauthAppOptions {
  config?: GatewayConfig
  keys?: KeyStore
  limiters?: LimiterRegistry
  /** Every log line is appended here (G5 checks). */
  logs?: string[]
}

export function snapshotOf (config: GatewayConfig, version = 1): Snapshot {
  return { version, config, indexes: buildIndexes(config), chains: new Map() }
}

/**
 * A bare fastify app with the gateway's logger, error handler and the OAuth plugin only (no other service),
 * on a fresh temporary data dir unless a config is given.
 */
export async function buildOauthApp (options: OauthAppOptions = {}): Promise<OauthApp> {
  const config = options.config ?? await buildOauthConfig()
  const logs = options.logs ?? []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(chunk.toString('utf8')); done() } })
  const logger = createLogger('trace', sink) as FastifyBaseLogger
  const ownedKeys = options.keys === undefined ? await createKeyStore(config, { rescanIntervalMs: 0 }) : undefined
  const keys = options.keys ?? ownedKeys as KeyStore
  let snapshot = snapshotOf(config)

  const app = Fastify({ loggerInstance: logger })
  app.setErrorHandler(createErrorHandler('plain'))
  await app.register(oauthRoutes({
    shared: { keys, logger, limiters: options.limiters ?? createLimiterRegistry(config.rate_limit_store) },
    snapshot: () => snapshot,
  }))
  await app.ready()
  return {
    app,
    keys,
    setConfig (next) { snapshot = snapshotOf(next, snapshot.version + 1) },
    config: () => snapshot.config,
    async close () {
      await app.close()
      if (options.config === undefined) await rm(config.server.data_dir, { recursive: true, force: true })
    },
  }
}

/** `Authorization: Basic` as RFC 6749 §2.3.1 builds it: each part form-urlencoded, then joined with `:`. */
export function basicAuth (clientId: string, secret: string): string {
  const encode = (s: string) => encodeURIComponent(s).replaceAll('%20', '+')
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`
}

export interface TokenRequestOptions {
  headers?: Record<string, string>
  remoteAddress?: string
  /** Query string, without `?`. */
  query?: string
  contentType?: string
}

/** POSTs a form (an object, or a raw body string) to the token endpoint. */
export function postToken (app: FastifyInstance, form: Record<string, string> | string, options: TokenRequestOptions = {}): Promise<LightMyRequestResponse> {
  const payload = typeof form === 'string' ? form : new URLSearchParams(form).toString()
  return app.inject({
    method: 'POST',
    url: `/oauth/token${options.query === undefined ? '' : `?${options.query}`}`,
    headers: { 'content-type': options.contentType ?? 'application/x-www-form-urlencoded', ...options.headers },
    payload,
    ...(options.remoteAddress === undefined ? {} : { remoteAddress: options.remoteAddress }),
  })
}
