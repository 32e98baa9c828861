import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { HTTPMethods } from 'fastify'
import { bootGateway, type Booted } from '../../src/start/boot.js'
import { ConfigError } from '../../src/config/config-error.js'
import { policyChain } from '../../src/config/schema.js'
import { createLogger } from '../../src/logging/logger.js'
import { catalog as builtIn, type Catalog } from '../../src/pipeline/registry.js'
import type { ServiceModule } from '../../src/services/service-module.js'

/**
 * The generic piece a service whose routes come from its own settings relies on (the coming `proxy` service):
 * `routes(settings)` declares the routes, `routeEntrySchema` owns the shape of each `routes:` entry, and the
 * chain under `policies` is validated, built and run like any other. `echo` is a test service, not a proxy.
 */
interface EchoEntry { methods: HTTPMethods[], path: string, policies: Record<string, unknown>[] }

const echo: ServiceModule = {
  name: 'echo',
  description: 'Test service whose routes are declared in its settings.',
  routes: (settings) => Object.entries(settings.routes).map(([id, entry]) => {
    const { methods, path } = entry as unknown as EchoEntry
    return { id, method: methods, url: path, description: `echo route ${id}` }
  }),
  routeEntrySchema: {
    type: 'object',
    description: 'One echo route.',
    additionalProperties: false,
    required: ['methods', 'path'],
    properties: {
      methods: { type: 'array', minItems: 1, items: { type: 'string', enum: ['GET', 'HEAD', 'POST'] }, description: 'Methods served.' },
      path: { type: 'string', pattern: '^/', description: 'Path below the prefix.' },
      policies: policyChain('The route\'s policies.'),
    },
  },
  settingsSchema: {},
  build: () => ({ handlers: (route) => async function echoRoute () { return { route: route.id } } }),
}
const catalog: Catalog = { ...builtIn, services: [...builtIn.services, echo] }

const yaml = (routes: string): string => `
issuer: { issuer: https://auth.test }
scopes: {}
rate_limits: { tiny: { key: ip, points: 1, window_seconds: 60 } }
services:
  echo:
    prefix: /echo
    envelope: exchange
    routes:
${routes}
`
const routes = `      read_prices: { methods: [GET, HEAD], path: /prices/*, policies: [ { auth: {} } ] }
      open: { methods: [POST], path: /open, policies: [ { rate-limit: { limit: tiny } } ] }`

async function boot (t: Test, text: string): Promise<Booted> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lanegate-echo-'))
  const booted = await bootGateway({ text, catalog, logger: createLogger('silent'), adjust: (loaded) => { loaded.config.server.data_dir = dataDir } })
  t.teardown(async () => {
    await booted.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return booted
}

t.test('routes declared in settings are mounted with the chains of their entries', async (t) => {
  const { app } = await boot(t, yaml(routes))
  const read = await app.inject({ method: 'GET', url: '/echo/prices/a/b' })
  t.same({ status: read.statusCode, body: read.json() }, { status: 401, body: { error: 'Unauthenticated.' } })
  const first = await app.inject({ method: 'POST', url: '/echo/open' })
  t.same({ status: first.statusCode, body: first.json() }, { status: 200, body: { route: 'open' } })
  const second = await app.inject({ method: 'POST', url: '/echo/open' })
  t.same({ status: second.statusCode, body: second.json() }, { status: 429, body: { error: 'Too many requests', retry_after: 60 } })
  const wrongMethod = await app.inject({ method: 'GET', url: '/echo/open' })
  t.same({ status: wrongMethod.statusCode, allow: wrongMethod.headers.allow }, { status: 405, allow: 'POST' })
})

t.test('the service owns the schema of its routes: entries; their policies are checked like any chain', async (t) => {
  const bad = `      read_prices: { methods: [GET, PATCH], policies: [ { scope: { all: [x:y] } } ] }`
  const error = await bootGateway({ text: yaml(bad), catalog, logger: createLogger('silent') }).then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof ConfigError)
  t.same((error as ConfigError).problems.map((p) => [p.path, p.line, p.message]), [
    ['services.echo.routes.read_prices', 10, 'missing required key "path"'],
    ['services.echo.routes.read_prices.methods[1]', 10, 'must be one of: GET, HEAD, POST'],
  ])
})
