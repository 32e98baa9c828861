import { readFile } from 'node:fs/promises'
import t from 'tap'
import { eventually, lineOf, PRICING_CREDENTIAL, sendDispatches, sendTraffic, startConsoleGateway } from '../helpers/console-gateway.js'

async function view<T = Record<string, unknown>> (admin: string, name: string, query = ''): Promise<T> {
  const res = await fetch(`${admin}/api/console/${name}${query}`)
  if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`)
  t.equal(res.headers.get('cache-control'), 'no-store')
  return await res.json() as T
}

interface Overview {
  config_version: number
  ready: boolean
  totals: { requests: number, status: Record<string, number>, limited: Record<string, number>, upstream_errors: number, tokens: number }
  series: Array<{ t: number, rps: number }>
}

t.test('the console JSON of a real lanegate start: traffic, routes, explain, upstreams, reloads, and never a secret', async (t) => {
  const c = await startConsoleGateway(t)
  const { admin } = c
  const before = await view<Overview>(admin, 'overview')
  t.equal(before.config_version, 1)
  t.equal(before.ready, true)

  const traffic = await sendTraffic(c.gw.base)
  t.same(traffic.statuses.slice(0, 2), [201, 403], 'a payment intent created, one refused by scope')
  t.ok(traffic.limited >= 2, `429s (${traffic.limited})`)
  t.equal(traffic.statuses.at(-1), 502, `the lane 502 (statuses ${traffic.statuses.join(' ')})`)

  const overview = await eventually(async () => {
    const o = await view<Overview>(admin, 'overview')
    return o.totals.limited['payments-per-ip'] === traffic.limited && o.totals.upstream_errors >= 1 && o.totals.status['5xx'] >= 1 ? o : undefined
  }, 3_000, 'the traffic in the overview')
  t.ok(overview.totals.status['2xx'] >= before.totals.status['2xx'] + 4, '201 and three tokens')
  t.ok(overview.totals.status['4xx'] >= 1 + traffic.limited + 1, '403, 429s and the 404s before the limit')
  t.equal(overview.totals.tokens, 3)
  t.ok(overview.series.length > 0 && overview.series.every((p, i, all) => i === 0 || p.t > (all[i - 1] as { t: number }).t), 'one point a second, oldest first')
  const last = overview.series.at(-1)?.t ?? 0
  const since = await view<Overview>(admin, 'overview', `?since=${last}`)
  t.ok(since.series.every((p) => p.t > last), 'since= gives only newer points')

  t.test('clients: tokens issued and refusals per client; the payments-per-ip key at its limit', async (t) => {
    const clients = await view<{ clients: Array<{ client_id: string, tokens_issued: number, refusals: Record<string, number> }>, limits: Array<{ limit: string, key: string, keys: Array<{ key: string, remaining: number, used: number, reset_seconds: number }> | null }> }>(admin, 'clients')
    // payments-per-ip runs before auth: its 429s name no client (they show under the limit's key below).
    t.same(clients.clients.find((x) => x.client_id === 'demo-checkout'), { client_id: 'demo-checkout', organization: 'org_hq_demo', status: 'active', tokens_issued: 1, refusals: {} })
    t.match(clients.clients.find((x) => x.client_id === 'demo-status'), { tokens_issued: 1, refusals: { 403: 1 } })
    const ip = clients.limits.find((l) => l.limit === 'payments-per-ip')
    t.same(ip?.keys?.[0], { key: '127.0.0.1', used: 8, remaining: 0, reset_seconds: ip?.keys?.[0] === undefined ? 0 : ip.keys[0].reset_seconds })
  })

  t.test('routes is what `lanegate routes --json` prints; explain what `lanegate explain --json` says', async (t) => {
    t.same(await view(admin, 'routes'), JSON.parse(await c.cli('routes', '--config', c.config.file, '--json')))
    for (const [client, method, path] of [['demo-checkout', 'POST', '/api/v1/ecommerce/payment-intents'], ['demo-status', 'POST', '/api/v1/ecommerce/payment-intents']] as const) {
      const query = `?${new URLSearchParams({ client, method, path })}`
      t.same(await view(admin, 'explain', query), JSON.parse(await c.cli('explain', '--config', c.config.file, '--json', '--client', client, method, path)), `${client} ${method} ${path}`)
    }
    const bad = await fetch(`${admin}/api/console/explain?client=nobody&method=GET&path=/x`)
    t.equal(bad.status, 400)
    t.match(await bad.json(), { error: /unknown client "nobody"/ })
  })

  t.test('upstreams: a stopped pricing target turns ejected with its failed probe; store 001 counts its error', async (t) => {
    interface Up { upstreams: Array<{ name: string, kind: string, errors_per_min: number, targets: Array<{ url: string, state: string, last_probe: { ok: boolean, detail: string } | null }> }> }
    const healthy = await eventually(async () => {
      const u = await view<Up>(admin, 'upstreams')
      return u.upstreams.find((x) => x.name === 'pricing')?.targets.every((x) => x.state === 'healthy' && x.last_probe?.ok === true) === true ? u : undefined
    }, 15_000, 'both pricing targets healthy')
    t.match(healthy.upstreams.find((x) => x.name === 'org_store_001'), { kind: 'lane', errors_per_min: 1, targets: [{ state: 'unchecked' }] }, 'a lane has no health checks: unchecked, not healthy')
    await c.pricing[0].close()
    const ejected = await eventually(async () => {
      const u = await view<Up>(admin, 'upstreams')
      const a = u.upstreams.find((x) => x.name === 'pricing')?.targets.find((x) => x.url === c.pricing[0].url)
      return a?.state === 'ejected' ? a : undefined
    }, 15_000, 'the stopped target ejected')
    t.match(ejected.last_probe, { ok: false, detail: /^GET \/health failed: \w+$/ })
  })

  t.test('config: a broken edit shows every problem with path and line, a good edit the new version', async (t) => {
    const points = 'rate_limits.payments-per-ip.points'
    await c.config.write(c.fixture.set(points, -5))
    interface Config { version: number, last_reload: { outcome: string, version: number, problems?: string[] } | null }
    const rejected = await eventually(async () => {
      const cfg = await view<Config>(admin, 'config')
      return cfg.last_reload?.outcome === 'rejected' ? cfg : undefined
    }, 15_000, 'the rejected reload')
    t.equal(rejected.version, 1)
    const line = await lineOf(c.config.file, 'payments-per-ip: { key: ip')
    t.match(rejected.last_reload?.problems, [new RegExp(`gateway\\.yaml:${line} rate_limits\\.payments-per-ip\\.points: `)])
    await c.config.write(c.fixture.set(points, 6))
    const applied = await eventually(async () => {
      const cfg = await view<Config>(admin, 'config')
      return cfg.last_reload?.outcome === 'applied' ? cfg : undefined
    }, 15_000, 'the applied reload')
    t.equal(applied.version, 2)
    const full = await view<{ loaded_at: string, last_reload: { at: string, changed?: string[] }, reloads: Array<{ at: string, outcome: string }> }>(admin, 'config')
    t.same(full.last_reload.changed, ['rate_limits.payments-per-ip.points'], 'the applied reload names the path it changed')
    t.equal(full.loaded_at, full.last_reload.at, 'loaded_at: when version 2 was loaded')
    t.equal((await view<Overview>(admin, 'overview')).config_version, 2)
  })

  t.test('dispatches: by status, the latest first with each store\'s outcome', async (t) => {
    const [committed, failed] = await sendDispatches(c.gw.base)
    const view2 = await view<{ enabled: boolean, by_status: Record<string, number>, latest: Array<Record<string, unknown>> }>(admin, 'dispatches')
    t.equal(view2.enabled, true)
    t.same(view2.by_status, { committed: 1, preview_failed: 1 })
    t.match(view2.latest, [
      { dispatch_id: failed, operation_type: 'price-change', client_id: 'demo-exchange', status: 'preview_failed', stores: [{ store: 'org_store_001', preview: 'failed', delivery: null }, { store: 'org_store_002', preview: 'ok', delivery: null }] },
      { dispatch_id: committed, status: 'committed', stores: [{ store: 'org_store_002', preview: 'ok', delivery: 'applied', attempts: 1, error: null }] },
    ])
    t.equal(JSON.stringify(view2).includes('"payload"'), false, 'payloads are not shown')
    // Fan-out previews and commits wait on every store's lane: timed apart from request latency.
    const metrics = await (await fetch(`${admin}/metrics`)).text()
    const count = (family: string, route: string): number => Number(new RegExp(`^${family}_count\\{service="fanout",route="${route}"\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0)
    t.same({
      previewStreams: count('lanegate_http_stream_duration_seconds', 'preview'),
      commitStreams: count('lanegate_http_stream_duration_seconds', 'commit'),
      previewRequests: count('lanegate_http_request_duration_seconds', 'preview'),
      commitRequests: count('lanegate_http_request_duration_seconds', 'commit'),
    }, { previewStreams: 2, commitStreams: 1, previewRequests: 0, commitRequests: 0 })
  })

  t.test('no answer holds a secret hash, a credential or a token', async (t) => {
    const yaml = await readFile(c.config.file, 'utf8')
    const hashes = [...yaml.matchAll(/\$scrypt\$[^"\s]+/g)].map((m) => m[0])
    t.ok(hashes.length >= 7, 'the demo accounts\' hashes')
    const secrets = [...hashes, PRICING_CREDENTIAL, 'demo-lane-001-credential', ...traffic.tokens, 'demo-checkout-secret']
    for (const name of ['overview', 'routes', 'upstreams', 'clients', 'config', 'dispatches']) {
      const body = await (await fetch(`${admin}/api/console/${name}`)).text()
      for (const secret of secrets) t.equal(body.includes(secret), false, `${name} holds no ${secret.slice(0, 12)}…`)
      t.equal(/eyJ[A-Za-z0-9_-]{10,}\./.test(body), false, `${name} holds no JWT`)
    }
  })
})
