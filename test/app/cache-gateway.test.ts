import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import { ConfigError } from '../../src/config/config-error.js'
import { PolicyAnswer } from '../../src/plugin/gateway-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { cacheStoreOf, putEntry } from '../../plugins/cache/store.js'
import { getToken } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

/** The cache policy on in-process routes of the demo gateway (inject), its metrics, its load-time rule and its bound. */
const demo = gatewayFixture()
const cached = demo
  .append('services.payments.routes.processor_config', { cache: { ttl_seconds: 60 } })
  .append('services.content.routes.content_list', { cache: { ttl_seconds: 60, by: 'organization' } })

t.test('an in-process answer is cached with its headers; a private, no-cache one is not; hits and misses are counted', async (t) => {
  const gw = await cached.boot(t)
  const token = await getToken(gw.app, 'demo-checkout')
  const call = async () => gw.app.inject({ url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${token}` } })
  const miss = await call()
  const hit = await call()
  t.same({ status: miss.statusCode, cache: miss.headers['x-cache'] }, { status: 200, cache: 'MISS' })
  t.same({ status: hit.statusCode, cache: hit.headers['x-cache'], type: hit.headers['content-type'], body: hit.body },
    { status: 200, cache: 'HIT', type: miss.headers['content-type'], body: miss.body })
  t.not(hit.headers['x-request-id'], miss.headers['x-request-id'], 'the hit carries its own request id')

  const content = await getToken(gw.app, 'demo-content')
  const list = async () => gw.app.inject({ url: '/public/v1/content', headers: { authorization: `Bearer ${content}` } })
  const first = await list()
  const second = await list()
  t.same([first.statusCode, first.headers['x-cache'], second.headers['x-cache'], second.headers['cache-control']], [200, 'MISS', 'MISS', 'private, no-cache'])

  const metrics = await gw.metrics?.registry.metrics() ?? ''
  t.match(metrics, /lanegate_cache_lookups_total\{service="payments",route="processor_config",result="hit"\} 1\n/)
  t.match(metrics, /lanegate_cache_lookups_total\{service="payments",route="processor_config",result="miss"\} 1\n/)
  t.match(metrics, /lanegate_cache_lookups_total\{service="content",route="content_list",result="miss"\} 2\n/)
})

t.test('a route without the cache policy is never counted as a cache lookup, even when it answers its own X-Cache', async (t) => {
  // A `headers` step may pass on what a CDN in front of a backend says; only routes ending in `cache` are counted.
  const gw = await demo.append('services.payments.routes.processor_config', { headers: { response: { set: { 'X-Cache': 'HIT' } } } }).boot(t)
  const token = await getToken(gw.app, 'demo-checkout')
  const res = await gw.app.inject({ url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${token}` } })
  t.same({ status: res.statusCode, cache: res.headers['x-cache'] }, { status: 200, cache: 'HIT' })
  const metrics = await gw.metrics?.registry.metrics() ?? ''
  t.match(metrics, /lanegate_http_requests_total\{service="payments",route="processor_config",method="GET",status="200"\} 1\n/)
  t.notMatch(metrics, /lanegate_cache_lookups_total\{/)
})

t.test('cache anywhere but last in its chain is a config error at its path', async (t) => {
  const wrong = demo.set('services.payments.routes.processor_config', [{ cache: { ttl_seconds: 60 } }, { scope: { all: ['commerce:payment-intents.read'] } }]).text()
  const error = await parseGatewayConfig(wrong, 'gateway.yaml', { env: {} }).catch((e: unknown) => e)
  t.ok(error instanceof ConfigError)
  t.match((error as ConfigError).message, /services\.payments\.routes\.processor_config\[0\]\.cache: policy "cache" must be the last of the chain/)
})

t.test('the store keeps at most cache_store.max_bytes', async (t) => {
  const { config } = await parseGatewayConfig(demo.set('cache_store', { max_bytes: 4096 }).text(), 'gateway.yaml', { env: {} })
  t.equal(config.cache_store.max_bytes, 4096)
  const store = cacheStoreOf(gatewaySettings(config))
  const headers = { 'content-type': 'text/plain' }
  const body = Buffer.alloc(1000)
  const answer = new PolicyAnswer(200, headers, body)
  for (let i = 0; i < 20; i++) putEntry(store, `k${i}`, { headers, body, storedAt: Date.now(), url: `/p/${i}`, answer }, 60_000)
  t.ok(store.entries.calculatedSize <= 4096, `held ${store.entries.calculatedSize} bytes`)
  t.ok(store.entries.has('k19') && !store.entries.has('k0'), 'the least recently used went first')
  t.same([...store.keysByUrl.keys()], [...store.entries.keys()].map((k) => `/p/${k.slice(1)}`).reverse(), 'the URL index holds the kept entries only')
})
