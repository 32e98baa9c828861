import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import type { AdminConfig } from '../config/types.js'
import { adminAuthCheck, guardAdmin } from './admin-auth.js'
import { VIEWS, ViewQueryError, type ViewName, type ViewQuery } from './process-views.js'
import { redactedJson } from '../secrets/redact.js'
import { mountTokenRoute } from './token-route.js'

/** Where the console's answers come from: one process's gateway, or the primary summing its workers. */
export interface ConsoleSource {
  /** The page's JSON for `view`. */
  view (view: ViewName, query: ViewQuery): Promise<unknown>
  /** What the gateway makes of a pasted bearer token (token-view.ts): its caller and routes, or its refusal. */
  token (token: string): Promise<unknown>
  /** The strings no answer may contain (secret hashes, credentials, the admin token). */
  secrets (): readonly string[]
}

/** The page's own files (hand-written, in the repository's console/ folder) and the chart library's, from npm. */
const require = createRequire(import.meta.url)
const PAGE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url))
const ASSETS: Readonly<Record<string, { file: string, type: string }>> = {
  'console.js': { file: `${PAGE_DIR}console.js`, type: 'text/javascript; charset=utf-8' },
  'console.css': { file: `${PAGE_DIR}console.css`, type: 'text/css; charset=utf-8' },
  'uPlot.iife.min.js': { file: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
}

/** Nothing but the gateway's own origin: the page works offline and sends nothing elsewhere. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * Mounts the operator console on the admin listener: `admin.auth` first (every path but the probes), then
 * `GET /` (the page), `GET /console/<file>` (its script and styles, uPlot's from node_modules) and
 * `GET /api/console/<view>` (the JSON each view polls once a second), and `POST /api/console/token` (a pasted token,
 * token-route.ts). Read-only: the POST changes nothing either. Every answer passes `redactedJson` before it leaves.
 * The files are read once, here.
 */
export function mountConsole (app: FastifyInstance, admin: AdminConfig | undefined, source: ConsoleSource): void {
  const guard = adminAuthCheck(admin?.auth)
  if (guard !== undefined) guardAdmin(app, guard)
  const page = readFileSync(`${PAGE_DIR}index.html`, 'utf8')
  const files = new Map(Object.entries(ASSETS).map(([name, asset]) => [name, { body: readFileSync(asset.file), type: asset.type }]))

  app.get('/', async function consolePage (_request, reply) {
    return reply.type('text/html; charset=utf-8').header('content-security-policy', CSP).header('cache-control', 'no-store').send(page)
  })
  app.get<{ Params: { file: string } }>('/console/:file', async function consoleAsset (request, reply) {
    const file = files.get(request.params.file)
    if (file === undefined) return reply.code(404).send({ error: 'Not found.' })
    return reply.type(file.type).header('cache-control', 'max-age=300').header('x-content-type-options', 'nosniff').send(file.body)
  })
  app.get<{ Params: { view: string }, Querystring: Record<string, string> }>('/api/console/:view', async function consoleView (request, reply) {
    const view = request.params.view as ViewName
    reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
    if (!VIEWS.includes(view)) return reply.code(404).send({ error: 'Not found.' })
    try {
      const body = await source.view(view, request.query)
      return reply.type('application/json; charset=utf-8').send(redactedJson(body, source.secrets()))
    } catch (error) {
      if (error instanceof ViewQueryError) return reply.code(400).send({ error: error.message })
      throw error
    }
  })
  mountTokenRoute(app, source)
}
