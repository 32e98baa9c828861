import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { redactedJson } from '../secrets/redact.js'

/** The largest body `POST /api/console/token` reads: a bearer token is refused past 8 KiB anyway. */
export const TOKEN_BODY_LIMIT = 16 * 1024

const USAGE = 'Send the token as JSON: {"token": "<bearer token>"} with Content-Type: application/json.'

/** Fixed answers for what fastify refuses itself: its messages are not shown, so no part of a body is. */
const FRAMEWORK_ERRORS: Readonly<Record<number, string>> = {
  400: USAGE,
  413: `The body is larger than ${TOKEN_BODY_LIMIT} bytes.`,
  415: USAGE,
}

/** What the route asks of the console's source (console-routes.ts's ConsoleSource has it). */
interface TokenSource {
  token (token: string): Promise<unknown>
  secrets (): readonly string[]
}

class MalformedBody extends Error {
  readonly statusCode = 400
}

/**
 * `POST /api/console/token` `{"token": "…"}`: what the gateway makes of a pasted token (token-view.ts). A POST so the
 * token never sits in a URL; behind `admin.auth` (the listener's onRequest hook runs first) and refused to a browser
 * page of another origin. Its own scope parses the body (so no JSON error echoes a fragment of it) and renders its
 * own errors; the admin listener logs nothing, and nothing here hands the body to a logger.
 */
export function mountTokenRoute (app: FastifyInstance, source: TokenSource): void {
  void app.register(async function tokenScope (scope) {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: TOKEN_BODY_LIMIT }, function parseTokenBody (_request, body, done) {
      try {
        done(null, JSON.parse(body as string))
      } catch {
        done(new MalformedBody(USAGE), undefined)
      }
    })
    scope.setErrorHandler(function tokenRouteError (error: FastifyError, _request, reply) {
      const status = error.statusCode ?? 500
      const message = FRAMEWORK_ERRORS[status] ?? 'The token could not be checked.'
      return send(reply, status >= 400 && status < 500 ? status : 500, { error: message })
    })
    scope.post('/api/console/token', { bodyLimit: TOKEN_BODY_LIMIT }, async function consoleToken (request, reply) {
      if (!sameOrigin(request)) return send(reply, 403, { error: 'Paste tokens from the console page itself: this request came from another origin.' })
      const token = (request.body as { token?: unknown } | null | undefined)?.token
      if (typeof token !== 'string' || token.trim() === '') return send(reply, 400, { error: USAGE })
      return reply.code(200).type('application/json; charset=utf-8').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
        .send(redactedJson(await source.token(token), source.secrets()))
    })
  })
}

/**
 * A browser says where a request comes from (`Sec-Fetch-Site`, `Origin`): only the console's own page may post a
 * token. A client that is no browser sends neither and is let through (it carries `admin.auth` where there is one).
 */
function sameOrigin (request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false
  const origin = request.headers.origin
  if (origin === undefined) return true
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

function send (reply: FastifyReply, status: number, body: { error: string }): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').header('cache-control', 'no-store').send(body)
}
