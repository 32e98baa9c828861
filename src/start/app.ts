import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import { createErrorHandler } from '../errors/error-handler.js'
import { gatewayClientErrorHandler } from '../errors/client-error-handler.js'
import { registerBoundedJsonParser } from '../errors/json-body.js'
import { GatewayError } from '../plugin/gateway-error.js'
import { renderError } from '../errors/envelopes.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import type { GatewayConfig } from '../config/types.js'
import type { Gateway } from '../reload/live-config.js'
import { oauthRoutes } from '../oauth/routes.js'
import { createOpenApiHandler } from '../describe/openapi-route.js'
import { OPENAPI_PATH } from '../describe/route-table.js'
import { createChainRunner, createPreflightRunner } from '../pipeline/chain-runner.js'
import { mountServiceRoutes } from '../services/mount-service.js'
import { moduleForService, serviceRoutes } from '../services/service-module.js'
import { deferredRequestLogging } from '../logging/request-logger.js'
import type { GatewayMetrics } from '../observability/metrics.js'
import { countRefusal, MeteredLogController } from '../observability/instrument-app.js'
import { RequestLogController } from '../observability/request-log-controller.js'
import { addHttp2RequestTimeout } from '../tls/http2-request-timeout.js'
import { refusePlainHttp } from '../tls/plain-http-refusal.js'
import { listenerTransport, type ListenerTls } from '../tls/listener-tls.js'
import { OpenWebSockets } from '../websocket/open-websockets.js'
import { requestIdGenerator } from '../logging/request-id.js'
import { routeUpgradeRequests } from '../websocket/upgrade-requests.js'
import { AccessLog } from '../logging/access-log/access-log.js'
import { noteAnsweredError } from '../observability/answered-error.js'
import { noteWebSocketClosed } from '../observability/websocket-session.js'
import { accessLogHooks } from '../logging/access-log/access-log-hooks.js'
import { SpanExport } from '../observability/tracing/span-export.js'
import { followTelemetryConfig } from './follow-telemetry.js'

/** A quarter of the shortest timeout, between 50 ms and 1 s. */
function connectionsCheckingInterval (headersTimeoutMs: number, requestTimeoutMs: number): number {
  return Math.max(50, Math.min(1_000, Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 4)))
}

/**
 * Builds the gateway's fastify app from the boot snapshot. It never listens (server.ts does), so tests build it
 * the same way and use `inject` or `listen({port: 0})`. Routes are registered once; their policy chains are read
 * from the current snapshot on each request, which is what makes hot reload possible. With `metrics` every
 * answer and refusal is counted (observability/instrument-app.ts); without, the app has no metrics hook at all.
 * `listenerTls`: with `server.tls`, the pair the listener starts with (as the start read it), else read here.
 */
export async function buildApp (gateway: Gateway, logger: Logger, metrics?: GatewayMetrics, listenerTls?: ListenerTls): Promise<FastifyInstance> {
  const { config } = gateway.current()
  const envelopeForPath = envelopeFinder(config)
  // The access log and span export (off unless `access_log` / `telemetry.traces` are set) follow every reload; the
  // log controller tells them of each answered request.
  const accessLog = new AccessLog(accessLogHooks(logger as FastifyBaseLogger, metrics))
  const spans = new SpanExport((dropped) => { if (metrics !== undefined) metrics.tracesDropped.cell().value += dropped })
  const disableRequestLogging = !logger.isLevelEnabled('info')
  const controller = metrics === undefined ? new RequestLogController({ disableRequestLogging }) : new MeteredLogController(metrics, { disableRequestLogging })
  const app = createFastify(config.server, logger, envelopeForPath, listenerTls, controller)
  addRootHooks(app, metrics, envelopeForPath, controller)
  if (config.server.tls !== undefined) refusePlainHttp(app.server, config.server.headers_timeout_ms)
  followTelemetryConfig(app, gateway, { accessLog, spans }, controller)
  // HTTP/2 streams get request_timeout_ms too (node applies it to HTTP/1.1 connections only).
  if (config.server.tls !== undefined && config.server.http2 === true) addHttp2RequestTimeout(app, config.server.request_timeout_ms)

  // No route: `request.gw` stays null (no service, no snapshot); the error handler finds the envelope by path.
  app.setNotFoundHandler(async function notFound () {
    throw new GatewayError('not_found')
  })

  app.get('/healthz', async function health () {
    return { status: 'ok', config_version: gateway.current().version }
  })
  // The API description: no auth, no policies (docs/api-description.md).
  app.get(OPENAPI_PATH, createOpenApiHandler(gateway.current, gateway.catalog))
  await app.register(oauthRoutes({ shared: gateway.shared, snapshot: gateway.current }))

  addWebSockets(app, gateway, metrics, controller)

  await mountServices(app, gateway)
  return app
}

/**
 * WebSocket upgrades go through the router and the route's chain like any request (websocket/upgrade-requests.ts);
 * a reload rechecks the open connections' rights at the swap (no polling: an idle connection costs nothing).
 */
function addWebSockets (app: FastifyInstance, gateway: Gateway, metrics: GatewayMetrics | undefined, controller: RequestLogController): void {
  const websockets = new OpenWebSockets(gateway.current, app.log, metrics?.websockets, function webSocketEnded (request, reply, code) {
    // fastify never completes an upgraded request (its socket was taken from the response): it is completed here,
    // once, as a 101 spanning the session, for the metrics, the log line, the access line and the SERVER span.
    noteWebSocketClosed(request, code)
    reply.raw.statusCode = 101
    controller.requestCompleted(null, request, reply)
  })
  app.decorate('websockets', websockets)
  routeUpgradeRequests(app)
  const stopRechecks = gateway.onSwap(function recheckWebSockets (snapshot) { websockets.recheckAll(snapshot) })
  app.addHook('preClose', async function closeWebSockets () {
    stopRechecks()
    await websockets.closeAll(1001, 'server shutting down')
  })
}

/** The envelope of the service whose prefix a URL falls under (for 404s and malformed URLs), else plain. */
function envelopeFinder (config: GatewayConfig): (url: string) => EnvelopeName {
  const servicePrefixes = Object.entries(config.services).map(([, s]) => [s.prefix, s.envelope] as const)
  return function envelopeForPath (url: string): EnvelopeName {
    const path = url.split('?')[0] ?? ''
    return servicePrefixes.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))?.[1] ?? 'plain'
  }
}

/** The fastify instance with the server settings, request ids, logging and the router's own errors. */
function createFastify (server: GatewayConfig['server'], logger: Logger, envelopeForPath: (url: string) => EnvelopeName, listenerTls: ListenerTls | undefined, logController: RequestLogController): FastifyInstance {
  // Each request's logger is a deferred child: a real one only once something is logged at an enabled level.
  const requestLogging = deferredRequestLogging(requestIdGenerator())
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: server.trusted_proxies.length > 0 ? server.trusted_proxies : false,
    bodyLimit: server.body_limit_bytes,
    requestTimeout: server.request_timeout_ms,
    keepAliveTimeout: server.keep_alive_timeout_ms,
    // Plain HTTP, or with `server.tls` HTTPS (and HTTP/2 by ALPN with `server.http2`): src/tls/listener-tls.ts.
    ...listenerTransport(server, {
      maxHeaderSize: server.max_header_bytes,
      headersTimeout: server.headers_timeout_ms,
      // Node checks headersTimeout/requestTimeout only every connectionsCheckingInterval (default 30 s), so a
      // 10 s headers timeout closed slowloris sockets after 16–31 s. Checking at least every second
      // (more often for sub-second settings) enforces the configured values to within ±1 s, for a timer tick
      // that walks the open connections.
      connectionsCheckingInterval: connectionsCheckingInterval(server.headers_timeout_ms, server.request_timeout_ms),
    }, listenerTls),
    requestIdHeader: false,
    genReqId: requestLogging.genReqId,
    // One "request completed" line per request at info ("incoming request" at debug), and the access log and span
    // export told of each answered request (observability/request-log-controller.ts); below info (the level is
    // fixed at boot) the lines' preparation is skipped. (fastify 5.12 deprecates the top-level
    // disableRequestLogging for this.) With metrics, the same controller also counts every answered request
    // (observability/instrument-app.ts).
    logController,
    return503OnClosing: true,
    clientErrorHandler: gatewayClientErrorHandler,
    // HTTP/2: fastify closes the sessions with GOAWAY at close (their streams in flight finish); `idle` needs HTTP/1.
    forceCloseConnections: server.tls !== undefined && server.http2 === true ? true : 'idle',
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 200 },
    // The router's own 400s (malformed percent-encoding in the URL) answer in the gateway's envelope too.
    frameworkErrors: function malformedUrl (error, request, rawReply) {
      const reply = rawReply as FastifyReply
      reply.code(400).header('cache-control', 'no-store')
      reply.send(renderError(new GatewayError('bad_request', { message: 'The request URL is malformed.', cause: error }), envelopeForPath(request.url)))
    },
  })
  requestLogging.install(app.log)
  return app
}

/** What every request gets at the root: `request.gw`, the error handler, the JSON parser, the standard headers. */
function addRootHooks (app: FastifyInstance, metrics: GatewayMetrics | undefined, envelopeForPath: (url: string) => EnvelopeName, controller: RequestLogController): void {
  // `request.gw` is declared on every request (runtime/request-context.ts), so it is decorated once, here at the
  // root: every scope (oauth, services, hooks of other plugins) sees the same property. The chain runner sets it.
  app.decorateRequest('gw', null as never)
  app.setErrorHandler(createErrorHandler((request) => envelopeForPath(request.url), function observeRefusal (request, error, reply) {
    noteAnsweredError(request, error)
    if (metrics !== undefined) countRefusal(metrics, request, error)
    // fastify never completes an answer it could not write: a refusal decided after the client left is completed
    // here, once, for the metrics, the log line, the access line and the span alike.
    if (reply.raw.destroyed) controller.requestCompleted(null, request, reply.code(error.status))
  }))
  registerBoundedJsonParser(app)
  // Set when the request starts rather than in an onSend hook, which cost every response a promise. A handler
  // that allows caching (content) overwrites cache-control; the error handler sets no-store again.
  app.addHook('onRequest', function standardHeaders (request, reply, done) {
    reply.header('x-request-id', request.id)
    reply.header('cache-control', 'no-store')
    // A route whose chain and handler run synchronously (a cached token) would write its answer while llhttp is
    // still inside the request's head; a framing error that llhttp reports after the head (`Transfer-Encoding:
    // xchunked`) must win over that answer (test/e2e/client-errors). Only a request with a Transfer-Encoding can
    // fail that way, so only it waits a microtask, which lets the parser report first.
    if (request.headers['transfer-encoding'] !== undefined) queueMicrotask(done)
    else done()
  })
}

/** Builds each configured service and registers its routes under its prefix; closes them with the app. */
async function mountServices (app: FastifyInstance, gateway: Gateway): Promise<void> {
  const { config } = gateway.current()
  const closers: (() => Promise<void>)[] = []
  app.addHook('onClose', async function closeServices () {
    for (const close of closers) await close()
  })

  for (const [service, settings] of Object.entries(config.services)) {
    // A fixed service's block is under its own name; a service type's (`type: proxy`) under any name.
    const module = moduleForService(gateway.catalog.services, service, settings)
    if (module === undefined) throw new Error(`services.${service}: no service module (validation lets none through)`)
    const built = module.build({ service, shared: gateway.shared, currentConfig: () => gateway.current().config })
    if (built.close) closers.push(built.close)
    // Validation has checked `routes:` against the same declarations (an unknown id never gets this far).
    const routes = serviceRoutes(module, built, settings)
    await app.register(async function serviceScope (scope) {
      mountServiceRoutes(scope, {
        service,
        envelope: settings.envelope,
        routes,
        contextHook: (route) => createChainRunner(gateway.current, service, route.id, settings.envelope),
        preflightHook: (route) => createPreflightRunner(gateway.current, service, route.id, settings.envelope),
        snapshot: gateway.current,
      })
    }, { prefix: settings.prefix })
  }
}
