import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, onRequestHookHandler } from 'fastify'
import type { Snapshot } from '../runtime/snapshot.js'
import type { EnvelopeName } from '../plugin/envelope-name.js'
import { GatewayError } from '../plugin/gateway-error.js'
import { runInProcessHeadHooks } from '../plugin/response-phase.js'
import type { RouteDefinition } from './service-module.js'
import { requestContext } from '../runtime/request-context.js'

export interface MountOptions {
  service: string
  envelope: EnvelopeName
  routes: readonly RouteDefinition[]
  /** The hook that sets `request.gw` and runs what stands before the handler (the gateway: the policy chain). */
  contextHook: (route: RouteDefinition) => onRequestHookHandler
  /** The snapshot the 405 answers are rendered with. */
  snapshot: () => Snapshot
  /**
   * The hook for a CORS preflight of `route` (the gateway: its `cors` step alone). A URL that does not serve
   * OPTIONS itself sends `OPTIONS` with `Access-Control-Request-Method: M` to the hook of its route for `M`; without
   * a hook, or when the hook lets the request go on, the answer is 405.
   */
  preflightHook?: (route: RouteDefinition) => onRequestHookHandler
}

/**
 * Registers a service's routes in `app` (already under the service's prefix): parsed-body routes, streamed
 * routes (`rawBody`) in a scope that leaves the body in `request.raw`, and 405 with `Allow` for every other method
 * fastify routes on a known path (TRACE and QUERY included, as at the token endpoint), refused in `onRequest`:
 * the body of a request refused on its method is never read, so it gets 405 whatever it holds (not 400 or 413).
 * A service whose block the current snapshot no longer has (a removed `proxy` block) answers 404 there instead,
 * as its routes do. The gateway mounts every service with it; tests mount one service with their own
 * `contextHook` in place of the policy chain, so they exercise the same registration.
 */
export function mountServiceRoutes (app: FastifyInstance, options: MountOptions): void {
  const { service, envelope, routes } = options
  const addRoute = (scope: FastifyInstance, route: RouteDefinition): void => {
    scope.route({
      ...route.options,
      method: typeof route.method === 'string' ? route.method : [...route.method],
      url: route.url,
      bodyLimit: route.bodyLimit,
      config: { service, routeId: route.id },
      onRequest: options.contextHook(route),
      // The response phase's head hooks over in-process answers (a request whose chain registered none passes on).
      onSend: runInProcessHeadHooks,
      handler: route.handler,
    })
  }
  for (const route of routes.filter((r) => r.rawBody !== true)) addRoute(app, route)
  const raw = routes.filter((r) => r.rawBody === true)
  if (raw.length > 0) {
    // Streamed routes (the live proxy) leave the body in request.raw: no parser may consume it.
    app.register(async function rawBodyScope (scope) {
      scope.removeAllContentTypeParsers()
      scope.addContentTypeParser('*', function keepStream (_request, _payload, done) { done(null) })
      for (const route of raw) addRoute(scope, route)
    })
  }

  const methodsByUrl = new Map<string, Set<string>>()
  const preflightsByUrl = new Map<string, Map<string, onRequestHookHandler>>()
  for (const route of routes) {
    const methods = methodsByUrl.get(route.url) ?? new Set<string>()
    for (const m of [route.method].flat()) methods.add(m)
    if (methods.has('GET')) methods.add('HEAD')
    methodsByUrl.set(route.url, methods)
    if (options.preflightHook !== undefined) {
      const hooks = preflightsByUrl.get(route.url) ?? new Map<string, onRequestHookHandler>()
      const hook = options.preflightHook(route)
      for (const m of [route.method].flat()) hooks.set(m, hook)
      preflightsByUrl.set(route.url, hooks)
    }
  }
  for (const [url, methods] of methodsByUrl) {
    // A method another route serves on a pattern that overlaps this one (`GET /prices/*` beside `PUT
    // /prices/:sku`, both from a proxy block's settings) is left to that route: a 405 here would shadow it.
    const elsewhere = [...methodsByUrl].filter(([other]) => other !== url && patternsOverlap(other, url))
    const others = (app.supportedMethods as HTTPMethods[]).filter((m) => !methods.has(m) && !elsewhere.some(([, served]) => served.has(m)))
    if (others.length === 0) continue
    const allowed = new Set(methods)
    for (const [other, served] of elsewhere) if (patternCovers(other, url)) for (const m of served) allowed.add(m)
    const allow = [...allowed].join(', ')
    /** The answer: 405 with Allow, or 404 once a reload removed the block (its routes answer 404 too). */
    const refusal = (request: FastifyRequest): GatewayError => {
      const snapshot = options.snapshot()
      const block = snapshot.config.services[service]
      request.gw = requestContext(snapshot, service, '(405)', block?.envelope ?? envelope)
      return block === undefined ? new GatewayError('not_found') : new GatewayError('method_not_allowed', { headers: { allow } })
    }
    app.route({
      method: others,
      url,
      onRequest: function refuseMethod (request, reply, done) {
        const requested = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : undefined
        const preflight = typeof requested === 'string' ? preflightsByUrl.get(url)?.get(requested) : undefined
        if (preflight !== undefined) {
          // The route's `cors` step answers the preflight; without one it goes on, and is refused here.
          preflight.call(this, request, reply, function afterPreflight (error) {
            if (error !== undefined || reply.sent) done(error)
            else done(refusal(request))
          })
          return
        }
        done(refusal(request))
      },
      // Never reached (onRequest always refuses or answers); fastify requires a handler.
      handler: async function methodNotAllowed (request: FastifyRequest, _reply: FastifyReply) {
        throw refusal(request)
      },
    })
  }
}

/** Whether some path matches both fastify patterns (static segments, `:param` segments, a final `*`). */
function patternsOverlap (a: string, b: string): boolean {
  const x = a.split('/')
  const y = b.split('/')
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const p = x[i]
    const q = y[i]
    if (p === '*' || q === '*') return true
    if (p === undefined || q === undefined) return false
    if (p.startsWith(':') || q.startsWith(':')) continue
    if (p !== q) return false
  }
  return true
}

/** Whether every path `inner` matches is matched by `outer` too. */
function patternCovers (outer: string, inner: string): boolean {
  const x = outer.split('/')
  const y = inner.split('/')
  for (let i = 0; i < x.length; i++) {
    const p = x[i] as string
    const q = y[i]
    if (p === '*') return true
    if (q === undefined || q === '*') return false
    if (p.startsWith(':')) continue
    if (q.startsWith(':') || p !== q) return false
  }
  return x.length === y.length
}
