import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { buildTestApp, getToken, type TestApp } from '../helpers/build-app.js'
import { repoPath } from '../helpers/paths.js'
import { waitFor } from '../helpers/wait-for.js'

type Line = Record<string, unknown>

/** A stand-in for the pricing service: answers every request with a small JSON body. */
async function startBackend (t: Test): Promise<string> {
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' })
    res.end('{"ok":true}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The demo gateway with `access_log` appended (`block`: the YAML lines of the section), listening on port 0. */
async function gatewayWithAccessLog (t: Test, block: string, env: Record<string, string> = {}): Promise<{ gw: TestApp, base: string, dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-access-app-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const demo = await readFile(repoPath('gateway.yaml'), 'utf8')
  const gw = await buildTestApp({ yaml: `${demo}\n${block.replaceAll('$DIR', dir)}\n`, env, logLevel: 'warn' })
  t.teardown(() => gw.close())
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  return { gw, base: `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`, dir }
}

async function linesOf (path: string, count: number): Promise<Line[]> {
  const text = await waitFor(async () => {
    const read = await readFile(path, 'utf8').catch(() => '')
    return read.split('\n').filter((l) => l !== '').length >= count ? read : undefined
  }, { what: `${count} access lines in ${path}` })
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line)
}

/** The fields whose values differ from run to run, checked for shape and then left out of the comparison. */
function stable (t: Test, line: Line): Line {
  t.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  t.match(line.request_id, /^.{8,}$/)
  t.match(line.trace_id, /^[0-9a-f]{32}$/)
  t.type(line.duration_ms, 'number')
  t.ok((line.bytes_in as number) > 0 && (line.bytes_out as number) > 0, 'bytes counted on the connection')
  const { time, request_id: _id, trace_id: _trace, duration_ms: _d, bytes_in: _in, bytes_out: _out, ...rest } = line
  void time
  return rest
}

const FILE_SINK = 'access_log:\n  sinks:\n    - { type: file, path: "$DIR/access.log" }'

t.test('each answered request writes one line with the documented fields, at log level warn', async (t) => {
  const { gw, base, dir } = await gatewayWithAccessLog(t, FILE_SINK, { PRICING_URL_A: await startBackend(t), PRICING_URL_B: await startBackend(t) })
  const token = await getToken(gw.app, 'demo-pricing', 'pricing:read')
  const ok = await fetch(`${base}/legacy/pricing/prices/42?sku_filter=a&api_key=k-123-secret`, { headers: { authorization: `Bearer ${token}`, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })
  t.equal(ok.status, 200)
  await ok.text()
  const refused = await fetch(`${base}/legacy/pricing/prices/42`)
  t.equal(refused.status, 401)
  await refused.text()
  // The first line is the token request's (POST /oauth/token).
  const [token_, first, second] = await linesOf(join(dir, 'access.log'), 3)
  t.match(token_, { method: 'POST', service: 'oauth', route: 'token', path: '/oauth/token', status: 200 })
  t.equal(first?.trace_id, '0af7651916cd43dd8448eb211c80319c', 'the caller\'s trace id')
  const relayed = stable(t, first ?? {})
  t.type(relayed.upstream_ms, 'number')
  t.same({ ...relayed, upstream_ms: 0 }, {
    client_ip: '127.0.0.1',
    method: 'GET',
    service: 'pricing',
    route: 'read_price',
    path: '/legacy/pricing/prices/42?sku_filter=a&api_key=[Redacted]',
    status: 200,
    upstream: 'pricing',
    upstream_ms: 0,
    client_id: 'demo-pricing',
    organization_id: 'org_hq_demo',
    refused_by: null,
    limit: null,
    error: null,
  })
  t.same(stable(t, second ?? {}), {
    client_ip: '127.0.0.1',
    method: 'GET',
    service: 'pricing',
    route: 'read_price',
    path: '/legacy/pricing/prices/42',
    status: 401,
    upstream: null,
    upstream_ms: null,
    client_id: null,
    organization_id: null,
    refused_by: 'auth',
    limit: null,
    error: 'unauthenticated',
  })
  const all = await readFile(join(dir, 'access.log'), 'utf8')
  t.notOk(all.includes(token) || all.includes('k-123-secret'), 'neither the token nor the query secret is in any line')
})

t.test('a request refused by a rate limit names the policy and the limit', async (t) => {
  const { gw, base, dir } = await gatewayWithAccessLog(t, `${FILE_SINK}\n  fields: [status, route, refused_by, limit, error, client_id]`)
  const token = await getToken(gw.app, 'demo-content', 'engage:content.view')
  let status = 0
  let sent = 0
  // content-per-client allows 600 a minute: ask until it refuses.
  while (status !== 429 && sent < 700) {
    const res = await fetch(`${base}/public/v1/content`, { headers: { authorization: `Bearer ${token}` } })
    status = res.status
    await res.arrayBuffer()
    sent++
  }
  t.equal(status, 429)
  // The token request's line comes first.
  const lines = await linesOf(join(dir, 'access.log'), sent + 1)
  t.equal(lines.length, sent + 1)
  t.same(lines[lines.length - 1], { status: 429, route: 'content_list', client_id: 'demo-content', refused_by: 'rate-limit', limit: 'content-per-client', error: 'too_many_requests' }, 'only the fields asked for, in the documented order')
  t.same(lines[1], { status: 200, route: 'content_list', client_id: 'demo-content', refused_by: null, limit: null, error: null })
})

t.test('a reload turns the access log on and off; lanegate_access_log_dropped_total counts what a sink dropped', async (t) => {
  const { gw, base, dir } = await gatewayWithAccessLog(t, '')
  const demo = await readFile(repoPath('gateway.yaml'), 'utf8')
  const path = join(dir, 'reloaded.log')
  const apply = async (block: string): Promise<void> => {
    const loaded = await parseGatewayConfig(`${demo}\n${block}\n`, 'gateway.yaml', { env: { ...process.env, LANEGATE_DATA_DIR: gw.dataDir }, adjust: (l) => { l.config.server.data_dir = gw.dataDir } })
    gw.gateway.apply(loaded)
  }
  const get = async (): Promise<void> => { await (await fetch(`${base}/healthz`)).arrayBuffer() }
  await get()
  await apply(`access_log:\n  fields: [path, status]\n  sinks:\n    - { type: file, path: "${path}" }`)
  await get()
  t.same(await linesOf(path, 1), [{ path: '/healthz', status: 200 }])
  await apply('')
  await get()
  await apply(`access_log:\n  fields: [path, status]\n  sinks:\n    - { type: file, path: "${path}" }`)
  await get()
  t.same(await linesOf(path, 2), [{ path: '/healthz', status: 200 }, { path: '/healthz', status: 200 }], 'the request made while it was off wrote nothing')

  // A sink that cannot keep up drops: a file in a folder that does not exist.
  await apply(`access_log:\n  sinks:\n    - { type: file, name: lost, path: "${join(dir, 'missing', 'a.log')}" }`)
  await get()
  await waitFor(async () => (await gw.metrics?.registry.getSingleMetricAsString('lanegate_access_log_dropped_total'))?.includes('lanegate_access_log_dropped_total{sink="lost"} 1'), { what: 'the dropped line counted' })
  await waitFor(() => gw.logs.join('').includes('access log sink failed'), { what: 'the failure logged' })
  t.pass('dropped line counted under the sink\'s name, and its failure logged')
})

t.test('an http sink POSTs the gateway\'s access lines as JSON arrays', async (t) => {
  const received: unknown[] = []
  const endpoint = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => { received.push(...JSON.parse(body) as unknown[]); res.end() })
  })
  endpoint.listen(0, '127.0.0.1')
  await once(endpoint, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { endpoint.closeAllConnections(); endpoint.close(() => resolve()) }))
  const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/logs`
  const { base } = await gatewayWithAccessLog(t, `access_log:\n  fields: [path, status]\n  sinks:\n    - { type: http, url: "${url}", batch_lines: 2 }`)
  for (let n = 0; n < 3; n++) await (await fetch(`${base}/healthz?n=${n}`)).arrayBuffer()
  await waitFor(() => received.length === 3, { what: 'three lines at the endpoint' })
  t.same(received, [0, 1, 2].map((n) => ({ path: `/healthz?n=${n}`, status: 200 })))
})
