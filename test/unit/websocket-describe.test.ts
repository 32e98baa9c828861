import t from 'tap'
import { openApiDocument } from '../../src/describe/openapi.js'
import { routesJson, routesTable, servedRoutes } from '../../src/describe/route-table.js'
import { loadGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { repoPath } from '../helpers/paths.js'

/** `lanegate routes` and /openapi.json say which routes upgrade to a WebSocket (the demo's live read route). */

t.test('routes --json carries the live read route\'s WebSocket limits, and only on that route', async (t) => {
  const { config, catalog } = await loadGatewayConfig(repoPath('gateway.yaml'))
  const { routes } = routesJson(servedRoutes(config, catalog)) as { routes: Array<{ service: string, route: string, websocket?: unknown }> }
  t.same(routes.filter((r) => r.websocket !== undefined).map((r) => [r.service, r.route, r.websocket]), [
    ['live', 'read', { max_message_bytes: 1048576, idle_timeout_seconds: 300 }],
  ])
  const table = routesTable(servedRoutes(config, catalog)).split('\n')
  t.same(table.filter((l) => l.includes('+WS')).map((l) => l.split(/\s{2,}/).slice(0, 4)), [['GET+WS', '/v1/stores/:store_org_id/live/*', 'live', 'read']])
})

t.test('/openapi.json marks the upgrading GET with x-websocket and a 101 response', async (t) => {
  const { config, catalog } = await loadGatewayConfig(repoPath('gateway.yaml'))
  const document = openApiDocument(config, catalog, 1) as { paths: Record<string, Record<string, { 'x-websocket'?: unknown, responses: Record<string, unknown> }>> }
  const marked = Object.entries(document.paths).flatMap(([path, operations]) => Object.entries(operations)
    .filter(([, operation]) => typeof operation === 'object' && operation !== null && 'x-websocket' in operation)
    .map(([method, operation]) => [path, method, operation['x-websocket'], operation.responses['101']]))
  t.same(marked, [[
    '/v1/stores/{store_org_id}/live/{path}',
    'get',
    { max_message_bytes: 1048576, idle_timeout_seconds: 300, access_token_query: true },
    { description: 'Switching Protocols: upgraded to a WebSocket relayed to the upstream (docs/websocket.md). The token may also come as the access_token query parameter.' },
  ]])
})
