import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * docs/plugins.md's promise, end to end: the example plugin (one plain .js file, no build) named in
 * examples/gateway.plugins.yaml runs in a real `lanegate start`, in the chain's YAML order, and its own error codes
 * render in the route's envelope.
 */
let gateway: SpawnedGateway
let token: string
let dataDir: string

t.before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lanegate-plugin-e2e-'))
  gateway = await spawnGateway({
    config: repoPath('examples/gateway.plugins.yaml'),
    env: { LANEGATE_DATA_DIR: dataDir, LANEGATE_CONTENT_DIR: repoPath('content') },
  })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dataDir, { recursive: true, force: true })
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  const res = await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })
  token = ((await res.json()) as { access_token: string }).access_token
})

async function content (headers: Record<string, string>): Promise<{ status: number, body: unknown }> {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { authorization: `Bearer ${token}`, ...headers } })
  return { status: res.status, body: await res.json() }
}

t.test('the plugin refuses a request without the header with its own code, in the route\'s envelope', async (t) => {
  t.same(await content({}), { status: 400, body: { error: 'header_missing', message: 'Send the X-Store-Channel header.' } })
})

t.test('the plugin refuses a value it does not accept', async (t) => {
  t.same(await content({ 'x-store-channel': 'web' }), {
    status: 403,
    body: { error: 'header_value_refused', header: 'X-Store-Channel', message: 'This value of the header is not accepted here.' },
  })
})

t.test('the plugin lets an accepted value through to the service', async (t) => {
  const { status, body } = await content({ 'x-store-channel': 'pos' })
  t.equal(status, 200)
  t.ok(Array.isArray((body as { data?: unknown }).data), 'the content list answered')
})

t.test('the plugin runs after the policies before it in the YAML: no token is a 401 from auth, not a 400', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`)
  t.same({ status: res.status, body: await res.json() }, { status: 401, body: { error: 'Unauthenticated.' } })
})

t.test('a route without the plugin in its chain is not affected', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/circulars`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(res.status, 200)
})

t.test('the start log names each loaded plugin with its file and version', async (t) => {
  const file = repoPath('examples/plugins/require-header.js')
  const line = gateway.output().split('\n').find((l) => l.includes('"plugin":"require-header"'))
  t.ok(line, 'a line for the plugin')
  t.match(JSON.parse(line ?? '{}'), { plugin: 'require-header', file, version: 'unversioned', msg: `policy plugin "require-header" loaded from ${file} (unversioned)` })
})

t.test('audit-log (the response phase) stamps X-Audit-Id and appends the answer\'s line to its file once sent', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { authorization: `Bearer ${token}`, 'x-store-channel': 'web' } })
  t.equal(res.status, 403)
  const id = res.headers.get('x-request-id')
  t.equal(res.headers.get('x-audit-id'), id)
  // The sent hook runs after the answer: the line may trail the client.
  const line = await waitFor(async () => {
    const text = await readFile(join(dataDir, 'audit.log'), 'utf8').catch(() => '')
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.request_id === id)
  }, { what: `the audit line of ${String(id)}`, intervalMs: 50 })
  const { time: _time, ms: _ms, ...rest } = line
  t.same(rest, { request_id: id, method: 'GET', url: '/public/v1/content', service: 'content', route: 'content_list', client: 'demo-content', status: 403, completed: true })
})
