import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Snapshot } from '../runtime/snapshot.js'
import { GatewayError } from '../plugin/gateway-error.js'
import type { SharedResources } from '../runtime/shared-resources.js'
import { createClientAuthenticator, type ClientAuthenticatorOptions } from './client-auth.js'
import { registerFormParser } from './form-body.js'
import { createJwksHandler, JWKS_PATH, METADATA_PATH, metadataHandler, TOKEN_PATH } from './metadata.js'
import { checkContentType, createTokenHandler, noCache } from './token-endpoint.js'
import { createTokenLimits } from './token-limits.js'
import { requestContext } from '../runtime/request-context.js'

export interface OauthRoutesDeps {
  /** Only `keys`, `logger` and `limiters` are used. */
  shared: Pick<SharedResources, 'keys' | 'logger' | 'limiters'>
  /** The current config snapshot; each request keeps the one it started with. */
  snapshot: () => Snapshot
  /** Success-cache settings of the client authenticator (tests). */
  clientCache?: ClientAuthenticatorOptions
}

/** Sets `request.gw` for the OAuth routes: their errors always render in the `oauth` envelope. */
function oauthContext (deps: OauthRoutesDeps, routeId: string) {
  return function setOauthContext (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    request.gw = requestContext(deps.snapshot(), 'oauth', routeId, 'oauth')
    done()
  }
}

/**
 * The OAuth 2.0 issuer as one encapsulated fastify plugin: `POST /oauth/token` (client credentials),
 * `GET /.well-known/oauth-authorization-server` (RFC 8414) and `GET /.well-known/jwks.json`. The form parser is
 * registered inside it, so it is the only body parser the token endpoint has and no other route sees it.
 * Errors are thrown as GatewayError and rendered by the app's error handler.
 */
export function oauthRoutes (deps: OauthRoutesDeps) {
  return async function oauthPlugin (app: FastifyInstance): Promise<void> {
    const handler = createTokenHandler({
      keys: deps.shared.keys,
      limits: createTokenLimits(deps.shared.limiters, deps.shared.logger),
      clients: createClientAuthenticator(deps.clientCache),
    })
    if (!app.hasRequestDecorator('gw')) app.decorateRequest('gw', null as never)
    registerFormParser(app)

    app.route({
      method: 'POST',
      url: TOKEN_PATH,
      onRequest: [oauthContext(deps, 'token'), noCache],
      preParsing: [checkContentType],
      handler,
    })
    // RFC 6749 §3.2: the token endpoint is POST only; every other method fastify routes (TRACE and WebDAV ones
    // included) gets 405 with Allow (A8), in the oauth envelope, refused in onRequest, before any body is read
    // or parsed (a PATCH with a body must not get 415/413/400 instead).
    app.route({
      method: app.supportedMethods.filter((m) => m !== 'POST'),
      url: TOKEN_PATH,
      onRequest: [oauthContext(deps, 'token'), noCache, async function tokenMethodNotAllowed () {
        throw new GatewayError('method_not_allowed', { message: 'The token endpoint accepts POST only.', headers: { allow: 'POST' } })
      }],
      handler: async function unreachable () {
        throw new GatewayError('method_not_allowed', { message: 'The token endpoint accepts POST only.', headers: { allow: 'POST' } })
      },
    })
    app.route({ method: 'GET', url: METADATA_PATH, onRequest: oauthContext(deps, 'metadata'), handler: metadataHandler })
    app.route({ method: 'GET', url: JWKS_PATH, onRequest: oauthContext(deps, 'jwks'), handler: createJwksHandler(() => deps.shared.keys.jwks()) })
  }
}
