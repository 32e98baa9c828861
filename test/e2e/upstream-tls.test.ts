import { join } from 'node:path'
import { copyFileSync, renameSync, writeFileSync } from 'node:fs'
import t from 'tap'
import { startHttpsBackend } from '../helpers/https-backend.js'
import { sample, scrape } from '../helpers/prometheus.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { createTestPki } from '../helpers/test-pki.js'
import { until } from '../helpers/wait-for.js'

/**
 * TLS to backends (issue 21) through a real `lanegate start`: HTTPS backends on a private CA made with openssl,
 * one that requires a client certificate, one whose certificate names another host, one self-signed; reached over
 * `type: proxy` blocks and over a store's lane (the live proxy).
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'

const pki = createTestPki('Internal CA')
const otherPki = createTestPki('Another CA')
t.teardown(() => { pki.remove(); otherPki.remove() })
// A CA file that starts out holding the wrong CA: replaced during a test, re-read without a reload.
copyFileSync(otherPki.caCert, join(pki.dir, 'rotating-ca.crt'))
const backendPair = pki.issue('pricing', 'pricing.internal', { sans: 'DNS:pricing.internal,IP:127.0.0.1' })
const namedOnly = pki.issue('named', 'pricing.internal', { sans: 'DNS:pricing.internal' })
const wrongName = pki.issue('wrong', 'elsewhere.example', { sans: 'DNS:elsewhere.example' })
const selfSigned = pki.selfSigned('self', 'self-signed', 'IP:127.0.0.1')
pki.issue('gw-client', 'lanegate-gateway', { usage: 'client' })

let gateway: SpawnedGateway
let token = ''
const TLS_BODY = { error: 'upstream_error', upstream_status: 0, upstream_failure: 'tls', upstream_body: '', message: 'The upstream service could not be reached.' }

t.before(async () => {
  const privateCa = await startHttpsBackend(t, 'private-ca', backendPair)
  const byName = await startHttpsBackend(t, 'by-name', namedOnly)
  const mtls = await startHttpsBackend(t, 'mtls', { ...backendPair, clientCa: pki.caCert })
  const wrong = await startHttpsBackend(t, 'wrong-name', wrongName)
  const self = await startHttpsBackend(t, 'self-signed', selfSigned)
  const block = (name: string, url: string, tls: string): string => `
  ${name}:
    type: proxy
    prefix: /b/${name}
    envelope: exchange
    upstream: { targets: [ "${url}" ], retry: { attempts: 1 }${tls === '' ? '' : `, tls: ${tls}`} }
    routes:
      any: { methods: [GET], path: "/*" }`
  const file = join(pki.dir, 'gateway.yaml')
  writeFileSync(file, `
server: { data_dir: ${join(pki.dir, 'data')} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  exchange:live.read: { description: Read lanes }
organizations:
  - id: org_hq
    stores:
      - { id: org_store_ok, lane: { base_url: "${privateCa.url}/lane", tls: { ca_file: ca.crt, only_ca: true } } }
      - { id: org_store_mtls, lane: { base_url: "${mtls.url}", tls: { ca_file: ca.crt, cert_file: gw-client.crt, key_file: gw-client.key } } }
      - { id: org_store_nocert, lane: { base_url: "${mtls.url}", tls: { ca_file: ca.crt } } }
      - { id: org_store_wrong, lane: { base_url: "${wrong.url}", tls: { ca_file: ca.crt } } }
      - { id: org_store_self, lane: { base_url: "${self.url}", tls: { ca_file: ca.crt } } }
service_accounts:
  - { client_id: reader, organization: org_hq, scopes: [exchange:live.read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
services:
  live:
    prefix: /v1/stores
    envelope: exchange
    policies: [ { auth: {} } ]
    routes:
      read: [ { organization: { param: store_org_id, not_found: true } } ]
${block('private', privateCa.url, '{ ca_file: ca.crt }')}
${block('byname', byName.url, '{ ca_file: ca.crt, servername: pricing.internal }')}
${block('mtls', mtls.url, '{ ca_file: ca.crt, cert_file: gw-client.crt, key_file: gw-client.key }')}
${block('nocert', mtls.url, '{ ca_file: ca.crt }')}
${block('wrong', wrong.url, '{ ca_file: ca.crt }')}
${block('self', self.url, '{ ca_file: ca.crt }')}
${block('untrusted', privateCa.url, '')}
${block('unverified', self.url, '{ verify: false }')}
${block('rotating', privateCa.url, '{ ca_file: rotating-ca.crt, only_ca: true }')}
`)
  gateway = await spawnGateway({ config: file })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'reader', client_secret: 'demo-exchange-secret' })
  token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
})

async function get (path: string): Promise<{ status: number, body: unknown }> {
  const res = await fetch(`${gateway.base}${path}`, { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, body: await res.json() }
}

t.test('proxy: a backend on a private CA is reached with ca_file; by servername when its certificate names no address', async (t) => {
  t.same(await get('/b/private/prices/1'), { status: 200, body: { backend: 'private-ca', url: '/prices/1', client_cn: '' } })
  t.same(await get('/b/byname/prices/2'), { status: 200, body: { backend: 'by-name', url: '/prices/2', client_cn: '' } })
})

t.test('proxy: a backend that requires a client certificate gets the gateway\'s; without one it is a tls failure', async (t) => {
  t.same(await get('/b/mtls/x'), { status: 200, body: { backend: 'mtls', url: '/x', client_cn: 'lanegate-gateway' } })
  t.same(await get('/b/nocert/x'), { status: 502, body: TLS_BODY })
})

t.test('proxy: a wrong name, a self-signed certificate and a CA not trusted answer 502 upstream_failure tls, never naming the backend', async (t) => {
  for (const name of ['wrong', 'self', 'untrusted']) {
    const answer = await get(`/b/${name}/x`)
    t.same(answer, { status: 502, body: TLS_BODY }, name)
    t.notMatch(JSON.stringify(answer.body), /127\.0\.0\.1|elsewhere|self-signed/, name)
  }
})

t.test('proxy: verify false reaches a self-signed backend, with a warning at start', async (t) => {
  t.same(await get('/b/unverified/x'), { status: 200, body: { backend: 'self-signed', url: '/x', client_cn: '' } })
  t.match(gateway.output(), /"level":40.*"path":"services\.unverified\.upstream\.tls\.verify".*config warning: the backend's certificate is not verified/)
})

t.test('a store lane over TLS: private CA (only_ca), client certificate; failures are tls in the exchange envelope', async (t) => {
  t.same(await get('/v1/stores/org_store_ok/live/items/1'), { status: 200, body: { backend: 'private-ca', url: '/lane/items/1', client_cn: '' } })
  t.same(await get('/v1/stores/org_store_mtls/live/items/2'), { status: 200, body: { backend: 'mtls', url: '/items/2', client_cn: 'lanegate-gateway' } })
  const laneTls = { ...TLS_BODY, message: 'The lane software could not be reached.' }
  for (const store of ['org_store_nocert', 'org_store_wrong', 'org_store_self']) {
    t.same(await get(`/v1/stores/${store}/live/x`), { status: 502, body: laneTls }, store)
  }
})

t.test('the failures are counted with outcome tls', async (t) => {
  const text = await scrape(gateway.admin ?? '')
  for (const upstream of ['wrong', 'self', 'untrusted', 'nocert', 'org_store_wrong', 'org_store_self', 'org_store_nocert']) {
    t.ok(sample(text, 'lanegate_upstream_requests_total', { upstream, outcome: 'tls' }) >= 1, upstream)
  }
  t.equal(sample(text, 'lanegate_upstream_requests_total', { upstream: 'private', outcome: 'ok' }), 1)
})

t.test('a changed CA file is re-read: new connections trust the new CA, without a reload', async (t) => {
  t.same(await get('/b/rotating/x'), { status: 502, body: TLS_BODY })
  copyFileSync(pki.caCert, join(pki.dir, 'rotating-ca.crt.new'))
  renameSync(join(pki.dir, 'rotating-ca.crt.new'), join(pki.dir, 'rotating-ca.crt'))
  // The file watcher notices the new CA at its next look: asked again until the answer changes.
  let answer: { status: number, body: unknown } | undefined
  await until(async () => (answer = await get('/b/rotating/x')).status === 200)
  t.same(answer, { status: 200, body: { backend: 'private-ca', url: '/x', client_cn: '' } })
  t.match(gateway.output(), /"msg":"upstream TLS files reloaded for new connections"/)
  t.notMatch(gateway.output(), /config reloaded/)
})
