import t from 'tap'
import { restartRequiredChanges } from '../../src/config/restart-required.js'
import type { GatewayConfig, ServiceConfig } from '../../src/config/types.js'
import { liveService } from '../../src/services/live/index.js'
import { serviceRestartChanges } from '../../src/services/mounted-routes.js'
import { proxyService } from '../../src/services/proxy/index.js'
import { baseTestConfig } from '../helpers/base-config.js'

/**
 * What a reload reports as needing a restart, and why (issue 13): routes are mounted once, from the config the
 * gateway started with, so a removed block needs no restart (its routes answer 404 at once), an added block does
 * (its paths answer 404 until then), and a change is measured against what is mounted.
 */
const modules = [liveService, proxyService]

function proxy (prefix: string, routes: Record<string, { methods: string[], path: string }> = { any: { methods: ['GET'], path: '/*' } }): ServiceConfig {
  return { type: 'proxy', prefix, envelope: 'exchange', policies: [], routes, upstream: { targets: ['http://127.0.0.1:9301'] } } as unknown as ServiceConfig
}
const live: ServiceConfig = { prefix: '/v1/stores', envelope: 'exchange', policies: [], routes: {} }
const config = (services: Record<string, ServiceConfig>): GatewayConfig => baseTestConfig({ services })

const boot = config({ live, pricing: proxy('/legacy/pricing') })
const ADDED = 'a service block the gateway did not start with: routes are mounted at start only, so its paths answer 404 until a restart'

t.test('removing a proxy block (or any block) needs no restart: nothing is reported', async (t) => {
  t.same(serviceRestartChanges(modules, boot, boot, config({ live })), [])
  t.same(serviceRestartChanges(modules, boot, boot, config({ pricing: proxy('/legacy/pricing') })), [], 'a fixed service removed')
  t.same(restartRequiredChanges(boot, boot, config({ live })), [], 'and no prefix change is reported')
})

t.test('adding a block the gateway did not start with is reported as such, once, not as a prefix change', async (t) => {
  const added = config({ live, pricing: proxy('/legacy/pricing'), inventory: proxy('/legacy/inventory') })
  t.same(serviceRestartChanges(modules, boot, boot, added), [{ key: 'services.inventory', message: ADDED }])
  const edited = config({ live, pricing: proxy('/legacy/pricing'), inventory: proxy('/legacy/inventory2') })
  t.same(serviceRestartChanges(modules, boot, added, edited), [], 'a later reload that keeps it does not report it again')
})

t.test('adding back a block the gateway started with (same prefix and routes) needs no restart', async (t) => {
  const removed = config({ live })
  t.same(serviceRestartChanges(modules, boot, removed, boot), [])
})

t.test('adding back a block under another prefix or with other routes: the mounted ones stay, and the log says so', async (t) => {
  const removed = config({ live })
  const moved = config({ live, pricing: proxy('/legacy/prices') })
  t.same(serviceRestartChanges(modules, boot, removed, moved), [
    { key: 'services.pricing.prefix', message: 'routes are mounted at start only: they stay under /legacy/pricing until a restart' },
  ])
  const rerouted = config({ live, pricing: proxy('/legacy/pricing', { any: { methods: ['GET', 'PUT'], path: '/*' } }) })
  t.same(serviceRestartChanges(modules, boot, removed, rerouted), [
    { key: 'services.pricing.routes', message: 'routes are mounted at start only: the route list started with (ids, methods, paths) stays until a restart; the chains of the routes kept change at once' },
  ])
})

t.test('a changed prefix is reported when it changes, and not when it changes back to the mounted one', async (t) => {
  const moved = config({ live: { ...live, prefix: '/v2/stores' }, pricing: proxy('/legacy/pricing') })
  t.same(serviceRestartChanges(modules, boot, boot, moved), [
    { key: 'services.live.prefix', message: 'routes are mounted at start only: they stay under /v1/stores until a restart' },
  ])
  t.same(serviceRestartChanges(modules, boot, moved, boot), [], 'back to what is mounted: served as it was')
})

t.test('a block that changes service type is reported as a type change alone', async (t) => {
  const retyped = config({ live, pricing: { ...live, prefix: '/legacy/pricing' } as ServiceConfig })
  t.same(serviceRestartChanges([...modules, { ...liveService, name: 'pricing' }], boot, boot, retyped).map((c) => c.key), ['services.pricing.type'])
})

t.test('settings read at start only are reported each by its own key, with what stays until a restart', async (t) => {
  const after = baseTestConfig({ services: boot.services, plugins: ['./p.mjs'], server: { ...boot.server, port: 1, keep_alive_timeout_ms: 1234 } })
  const server = 'the listener and its limits are set up at start only'
  t.same(restartRequiredChanges(boot, boot, after), [
    { key: 'plugins', message: 'outside policies are imported at start only; the ones loaded then stay until a restart' },
    { key: 'server.port', message: server },
    { key: 'server.keep_alive_timeout_ms', message: server },
  ])
  const tls = baseTestConfig({ services: boot.services, server: { ...boot.server, tls: { cert_file: '/c.crt', key_file: '/c.key', min_version: 'TLSv1.2' } } })
  t.same(restartRequiredChanges(boot, boot, tls), [{ key: 'server.tls', message: server }], 'a block added is named by its key')
})

t.test('a setting put back to its start value is not reported; one changed earlier is not reported again', async (t) => {
  const changed = baseTestConfig({ services: boot.services, server: { ...boot.server, keep_alive_timeout_ms: 1234 } })
  t.same(restartRequiredChanges(boot, changed, boot), [], 'back to the start value: what runs')
  const other = baseTestConfig({ services: boot.services, server: { ...boot.server, keep_alive_timeout_ms: 1234, body_limit_bytes: 4096 } })
  t.same(restartRequiredChanges(boot, changed, other).map((c) => c.key), ['server.body_limit_bytes'], 'only what this reload changed')
})
