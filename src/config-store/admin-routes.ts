import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ConfigError } from '../config/config-error.js'
import type { ErrorCode } from '../plugin/catalogue.js'
import { renderError } from '../errors/envelopes.js'
import { GatewayError } from '../plugin/gateway-error.js'
import { parseGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import { openConfigStore, type ConfigStore, type ConfigVersion } from './config-store.js'
import { ConfigStoreError } from './errors.js'
import { fleetStatus } from './fleet-status.js'
import { unifiedDiff } from './format.js'
import { parse } from 'yaml'
import { redactedText, secretsOf } from '../secrets/redact.js'
import { storedFileName } from './start-config.js'

export interface ConfigStoreRoutesOptions {
  url: string
  /** Relative paths of a pushed config resolve against this folder, as the instances read it. */
  baseDir: string
}

/** The largest config accepted by POST /config/versions. */
const MAX_BODY_BYTES = 4 * 1024 * 1024

/**
 * The config store on the admin listener (behind `admin.auth`, as every admin route but the probes):
 * `GET /config/versions` (history, `ETag` the head), `GET /config/versions/:n` (one version with its text), `GET /config/versions/:n/diff` (unified, from its parent),
 * `POST /config/versions` (`{text, message, author?}`, validated as `lanegate validate` does; `If-Match: "N"`
 * → 412 once the head moved; 422 with the problems), `GET /config/fleet` (instances and convergence). Every admin listener answers `GET /config/store` (`{following}`).
 * Errors use the plain envelope. The store is opened on first use and kept.
 */
export function mountConfigStoreRoutes (app: FastifyInstance, options: ConfigStoreRoutesOptions | undefined): void {
  // Whether this gateway follows a store: the console asks before it asks for versions (none in file mode).
  app.get('/config/store', async function configStore (_request, reply) {
    reply.header('cache-control', 'no-store')
    return { following: options !== undefined }
  })
  if (options === undefined) return
  const store = lazyStore(app, options.url)
  mountHistoryRoutes(app, store)
  mountPushRoute(app, store, options.baseDir)
  app.get('/config/fleet', async function configFleet (_request, reply) {
    return answer(reply, async () => {
      const s = await store()
      const [head, rows] = await Promise.all([s.headVersion(), s.instances()])
      return fleetStatus(head, rows)
    })
  })
}

/** The store, opened on first use and kept (an opening that failed is tried again next time); closed with the app. */
function lazyStore (app: FastifyInstance, url: string): () => Promise<ConfigStore> {
  let opening: Promise<ConfigStore> | undefined
  app.addHook('onClose', async () => { await (await opening?.catch(() => undefined))?.close() })
  return async () => {
    opening ??= openConfigStore(url)
    try {
      return await opening
    } catch (error) {
      opening = undefined
      throw error
    }
  }
}

type VersionRequest = FastifyRequest<{ Params: { version: string } }>

function mountHistoryRoutes (app: FastifyInstance, store: () => Promise<ConfigStore>): void {
  app.get<{ Querystring: { limit?: string } }>('/config/versions', async function configVersions (request, reply) {
    const limit = request.query.limit === undefined ? 50 : Number(request.query.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return fail(reply, 'bad_request', 'limit must be a whole number from 1 to 1000')
    return answer(reply, async () => {
      const s = await store()
      const [head, versions] = await Promise.all([s.headVersion(), s.history(limit)])
      reply.header('etag', `"${head}"`)
      return { head, versions }
    })
  })

  app.get('/config/versions/:version', async function configVersion (request: VersionRequest, reply) {
    if (!validVersion(request)) return fail(reply, 'bad_request', 'the version must be a positive whole number')
    return answer(reply, async () => {
      const version = await versionOf(await store(), request)
      reply.header('etag', `"${version.version}"`)
      return version
    })
  })

  app.get('/config/versions/:version/diff', async function configVersionDiff (request: VersionRequest, reply) {
    if (!validVersion(request)) return fail(reply, 'bad_request', 'the version must be a positive whole number')
    return answer(reply, async () => {
      const s = await store()
      const version = await versionOf(s, request)
      const parent = version.parent === null ? undefined : await s.get(version.parent)
      const before = parent === undefined ? { name: 'empty', text: '' } : { name: `version ${parent.version}`, text: parent.text }
      // The console shows this diff: the secrets of either side (hashes, credentials, URLs with passwords) never.
      const secrets = secretsOf([parsedYaml(before.text), parsedYaml(version.text)])
      const diff = unifiedDiff(before, { name: `version ${version.version}`, text: version.text })
      return { version: version.version, parent: version.parent, diff: redactedText(diff, secrets) }
    })
  })
}

function validVersion (request: VersionRequest): boolean {
  return /^[1-9]\d{0,9}$/.test(request.params.version)
}

async function versionOf (store: ConfigStore, request: VersionRequest): Promise<ConfigVersion> {
  const version = await store.get(Number(request.params.version))
  if (version === undefined) throw new GatewayError('config_version_not_found', { message: `No config version ${request.params.version}.` })
  return version
}

function mountPushRoute (app: FastifyInstance, store: () => Promise<ConfigStore>, baseDir: string): void {
  app.post('/config/versions', { bodyLimit: MAX_BODY_BYTES }, async function pushVersion (request, reply) {
    const body = request.body as { text?: unknown, message?: unknown, author?: unknown } | undefined
    if (typeof body?.text !== 'string' || typeof body.message !== 'string' || body.message.trim() === '' || (body.author !== undefined && typeof body.author !== 'string')) {
      return fail(reply, 'bad_request', 'the body must be JSON {"text": "<gateway.yaml>", "message": "<why>", "author"?: "<who>"}')
    }
    const ifMatch = request.headers['if-match']
    const ifVersion = ifMatch === undefined ? undefined : /^(?:W\/)?"?(\d+)"?$/.exec(ifMatch.trim())?.[1]
    if (ifMatch !== undefined && ifVersion === undefined) return fail(reply, 'bad_request', 'If-Match must be a version number, e.g. "12"')
    const { text, message } = body
    return answer(reply, async () => {
      const s = await store()
      await validate(text, baseDir, await s.headVersion() + 1)
      const pushed = await s.push({ text, message, author: authorOf(request, body.author as string | undefined), ifVersion: ifVersion === undefined ? undefined : Number(ifVersion) })
      reply.code(201).header('etag', `"${pushed.version}"`).header('location', `/config/versions/${pushed.version}`)
      const { text: _text, ...summary } = pushed
      return summary
    })
  })
}

async function validate (text: string, baseDir: string, version: number): Promise<void> {
  try {
    await parseGatewayConfig(text, storedFileName(baseDir, version))
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    throw new GatewayError('config_invalid', { fields: { problems: error.problems.map((p) => ({ path: p.path, line: p.line ?? null, message: p.message })) } })
  }
}

/**
 * Who pushed: the Basic user of `admin.auth`, whatever the body claims (the history is an audit trail); a bearer
 * token names no one, so there the body's `author` is taken, else "admin".
 */
function authorOf (request: FastifyRequest, claimed: string | undefined): string {
  const m = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.authorization ?? '')
  const decoded = m === null ? '' : Buffer.from(m[1] as string, 'base64').toString('utf8')
  const user = decoded.slice(0, Math.max(0, decoded.indexOf(':')))
  return user !== '' ? user : claimed ?? 'admin'
}

/** Runs a handler, rendering store and validation failures in the plain envelope. */
async function answer (reply: FastifyReply, handler: () => Promise<unknown>): Promise<unknown> {
  reply.header('cache-control', 'no-store')
  try {
    return await handler()
  } catch (error) {
    if (error instanceof GatewayError) return send(reply, error)
    if (error instanceof ConfigStoreError) {
      if (error.code === 'conflict') return send(reply, new GatewayError('config_version_conflict', { fields: { head: error.head ?? null } }))
      if (error.code === 'unreachable') return send(reply, new GatewayError('config_store_unavailable'))
      if (error.code === 'failed') return send(reply, new GatewayError('config_store_failed', { fields: { sqlstate: error.sqlstate ?? null } }))
    }
    throw error
  }
}

function fail (reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  return send(reply, new GatewayError(code, { message }))
}

function send (reply: FastifyReply, error: GatewayError): FastifyReply {
  return reply.code(error.status).header('cache-control', 'no-store').send(renderError(error, 'plain'))
}

/** A stored version's YAML as plain data (stored versions were validated; anything unreadable has no secrets to find). */
function parsedYaml (text: string): unknown {
  try {
    return parse(text)
  } catch {
    return undefined
  }
}
