import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AdminAuthConfig } from '../config/types.js'
import { renderError } from '../errors/envelopes.js'
import { GatewayError } from '../plugin/gateway-error.js'
import { parseSecretHash, verifySecret, type ParsedSecretHash } from '../secrets/secret-hash.js'

/** The shortest bearer token accepted from `admin.auth.token_env`. */
export const MIN_ADMIN_TOKEN_LENGTH = 16

/** Paths a probe reaches without credentials: a kubelet or load balancer checks them with no secret to hand. */
const OPEN_PATHS = new Set(['/healthz', '/readyz'])

/** Whether one request's `Authorization` header lets it in. */
type Check = (authorization: string | undefined) => boolean | Promise<boolean>

/**
 * The check `admin.auth` asks for, built at start: the bearer token is read from its environment variable now (a
 * missing or short one stops the start with a message naming the variable); a Basic password is checked against
 * its scrypt hash. Undefined without `admin.auth` (the listener is then on loopback: config-rules checks that).
 */
export function adminAuthCheck (auth: AdminAuthConfig | undefined, env: NodeJS.ProcessEnv = process.env): { check: Check, challenge: string } | undefined {
  if (auth === undefined) return undefined
  if (auth.token_env !== undefined) {
    const token = env[auth.token_env] ?? ''
    if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
      throw new Error(`admin.auth.token_env: the environment variable ${auth.token_env} is ${token === '' ? 'not set' : 'too short'} (the admin bearer token needs at least ${MIN_ADMIN_TOKEN_LENGTH} characters)`)
    }
    return { check: bearerCheck(token), challenge: 'Bearer realm="lanegate admin"' }
  }
  if (auth.basic !== undefined) {
    const parsed = parseSecretHash(auth.basic.password_hash)
    if (parsed === undefined) throw new Error('admin.auth.basic.password_hash is not a scrypt PHC hash (lanegate hash-secret)')
    return { check: basicCheck(auth.basic.user, parsed), challenge: 'Basic realm="lanegate admin", charset="UTF-8"' }
  }
  return undefined
}

function digest (value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** Compares digests, so neither the length nor the content of the token leaks through timing. */
function bearerCheck (token: string): Check {
  const expected = digest(token)
  return function bearer (authorization) {
    const m = /^Bearer +(\S+)\s*$/i.exec(authorization ?? '')
    return m !== null && timingSafeEqual(digest(m[1] as string), expected)
  }
}

/**
 * HTTP Basic against a scrypt hash. scrypt costs tens of milliseconds by design, and a console page asks once a
 * second: a header that passed is remembered by a keyed digest (a random key of this process, so the set holds
 * nothing a reader could replay elsewhere), at most a few, for as long as the process runs.
 */
function basicCheck (user: string, hash: ParsedSecretHash): Check {
  const key = randomBytes(32)
  const passed = new Set<string>()
  return async function basic (authorization) {
    const m = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '')
    if (m === null) return false
    const remembered = createHmac('sha256', key).update(m[1] as string).digest('base64')
    if (passed.has(remembered)) return true
    const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return false
    const userOk = timingSafeEqual(digest(decoded.slice(0, colon)), digest(user))
    const passwordOk = await verifySecret(decoded.slice(colon + 1), hash)
    if (!userOk || !passwordOk) return false
    if (passed.size >= 8) passed.clear()
    passed.add(remembered)
    return true
  }
}

/**
 * Puts the admin listener behind `check`: every path but /healthz and /readyz answers 401 `{"error":"Unauthenticated."}`
 * with a `WWW-Authenticate` challenge unless the request carries the credentials.
 */
export function guardAdmin (app: FastifyInstance, guard: { check: Check, challenge: string }): void {
  app.addHook('onRequest', async function adminAuth (request: FastifyRequest, reply: FastifyReply) {
    const path = request.url.split('?')[0] ?? ''
    if (OPEN_PATHS.has(path)) return
    if (await guard.check(request.headers.authorization)) return
    const error = new GatewayError('unauthenticated')
    return reply.code(401).header('www-authenticate', guard.challenge).header('cache-control', 'no-store').send(renderError(error, 'plain'))
  })
}
