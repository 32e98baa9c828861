import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'

/** cors, headers and ip-restriction through a real `lanegate start`: the mount code's preflight path included. */
const config = (dataDir: string): string => `
server: { data_dir: ${dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  engage:content.view: { description: Read published content }
organizations:
  - id: org_hq_demo
service_accounts:
  - client_id: demo-content
    organization: org_hq_demo
    scopes: [engage:content.view]
    secrets:
      - { created: "2026-11-01", hash: "$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g" }
services:
  content:
    prefix: /public/v1
    envelope: plain
    policies:
      - cors: { origins: [https://shop.example], methods: [GET], headers: [Authorization], max_age_seconds: 600 }
      - headers: { request: { set: { X-Channel: gateway } }, response: { set: { X-Frame-Options: DENY }, remove: [x-request-id] } }
      - auth: {}
    routes:
      content_list:
        - ip-restriction: { allow: [127.0.0.0/8, "::1"] }
        - scope: { all: [engage:content.view] }
      circulars_list:
        - ip-restriction: { deny: [127.0.0.0/8, "::1"] }
    source_dir: ${repoPath('content')}
`

let gateway: SpawnedGateway
let token: string
const origin = 'https://shop.example'

t.before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-bundled-'))
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, config(join(dir, 'data')))
  gateway = await spawnGateway({ config: file })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
    await rm(dir, { recursive: true, force: true })
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
})

t.test('cors: the gateway answers a preflight with 204 and the allowing headers', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
  })
  t.equal(res.status, 204)
  t.equal(await res.text(), '')
  t.same([...['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age'].map((h) => res.headers.get(h))],
    [origin, 'GET', 'Authorization', '600'])
})

t.test('cors and headers: an allowed request carries Allow-Origin, the set response header, not the removed one', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { origin, authorization: `Bearer ${token}` } })
  t.equal(res.status, 200)
  t.equal(res.headers.get('access-control-allow-origin'), origin)
  t.equal(res.headers.get('x-frame-options'), 'DENY')
  t.equal(res.headers.get('x-request-id'), null)
})

t.test('cors and headers apply to a refusal from a later step too', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { origin } })
  t.same({ status: res.status, body: await res.json() }, { status: 401, body: { error: 'Unauthenticated.' } })
  t.equal(res.headers.get('access-control-allow-origin'), origin)
  t.equal(res.headers.get('x-frame-options'), 'DENY')
})

t.test('ip-restriction: a denied client gets the policy\'s own code in the route\'s envelope', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/circulars`, { headers: { authorization: `Bearer ${token}` } })
  t.same({ status: res.status, body: await res.json() }, { status: 403, body: { error: 'ip_not_allowed', message: 'Requests from this address are not allowed on this route.' } })
})
