import t from 'tap'
import { servedRoutes } from '../../src/describe/route-table.js'
import { renderError } from '../../src/errors/envelopes.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import { buildTestApp, type TestApp } from '../helpers/build-app.js'

/**
 * Every service of the demo gateway.yaml renders the errors the gateway itself produces (an unserved method, a
 * missing token) through its own envelope, exactly as renderError does for that code: the live/exchange 405 once
 * answered `{"error":"Method not allowed."}` instead of the exchange envelope's `{error: <code>, message}`.
 * test/unit/errors-catalogue.test.ts renders every catalogued code in every envelope.
 */
let gw: TestApp

t.before(async () => { gw = await buildTestApp() })
t.teardown(() => gw.close())

/** A concrete URL for a route path (`:param` and `*` filled in). */
function concrete (path: string): string {
  return path.replace(/:[A-Za-z_]+/g, 'org_store_001').replace(/\*$/, 'x')
}

t.test('each service answers an unserved method and a missing token in its own envelope', async (t) => {
  const rows = servedRoutes(gw.gateway.current().config, gw.gateway.catalog).filter((row) => row.declaration !== undefined)
  const services = new Map(rows.map((row) => [row.service, row]))
  t.ok(services.size >= 8, `${services.size} services: ${[...services.keys()].join(', ')}`)
  for (const [service, row] of services) {
    const url = concrete(row.path)
    const trace = await gw.app.inject({ method: 'TRACE', url })
    t.same({ status: trace.statusCode, body: trace.json() },
      { status: 405, body: renderError(new GatewayError('method_not_allowed'), row.envelope) }, `${service} (${row.envelope}) TRACE ${url}`)
    if (row.chain.some((link) => link.policy === 'auth')) {
      const method = row.methods[0] ?? 'GET'
      const anonymous = await gw.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: method === 'GET' || method === 'HEAD' ? undefined : '{}' })
      t.same({ status: anonymous.statusCode, body: anonymous.json() },
        { status: 401, body: renderError(new GatewayError('unauthenticated'), row.envelope) }, `${service} (${row.envelope}) ${method} ${url} without a token`)
    }
  }
})

t.test('the exchange envelope: {error: <code>, message} for the generic codes, fixed text for authentication', async (t) => {
  t.same(renderError(new GatewayError('method_not_allowed'), 'exchange'), { error: 'method_not_allowed', message: 'Method not allowed.' })
  t.same(renderError(new GatewayError('not_found'), 'exchange'), { error: 'not_found', message: 'Not found.' })
  t.same(renderError(new GatewayError('unauthenticated'), 'exchange'), { error: 'Unauthenticated.' })
  t.same(renderError(new GatewayError('forbidden', { message: 'missing scope x' }), 'exchange'), { error: 'Forbidden.' })
})
