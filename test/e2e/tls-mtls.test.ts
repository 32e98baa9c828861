import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { curl, httpsGet } from '../helpers/tls-clients.js'
import { createTestPki, type Issued } from '../helpers/test-pki.js'
import { startBackend } from '../helpers/upstream-servers.js'

/**
 * Mutual TLS from callers (issue 21) on a real `lanegate start`: `server.tls.client_ca_file` asks for a client
 * certificate, the `client-certificate` policy requires one (401 without, 403 when it matches none of the lists)
 * in the route's envelope; clients are curl (`--cert`/`--key`) and node:https, certificates made by openssl.
 */

const pki = createTestPki('Gateway CA')
const clients = createTestPki('Tills CA')
const strangers = createTestPki('Stranger CA')
t.teardown(() => { pki.remove(); clients.remove(); strangers.remove() })
pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const till12 = clients.issue('till12', 'till-12', { usage: 'client', sans: 'DNS:till-12.store.internal' })
const till7 = clients.issue('till7', 'till-7', { usage: 'client', sans: 'DNS:till-7.store.internal,URI:spiffe://retail/till/7' })
const stranger = strangers.issue('stranger', 'till-12', { usage: 'client' })
const ca = readFileSync(pki.caCert)

let gateway: SpawnedGateway

t.before(async () => {
  const backend = await startBackend(t, 'pricing')
  const file = join(pki.dir, 'gateway.yaml')
  writeFileSync(file, `
server:
  data_dir: ${join(pki.dir, 'data')}
  tls: { cert_file: gw.crt, key_file: gw.key, client_ca_file: ${clients.caCert} }
admin: false
scopes:
  pricing:read: { description: Read prices }
services:
  tills:
    type: proxy
    prefix: /tills
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    routes:
      any: { methods: [GET], path: /any, policies: [ { client-certificate: {} } ] }
      by_subject: { methods: [GET], path: /subject, policies: [ { client-certificate: { subjects: [till-12] } } ] }
      by_san: { methods: [GET], path: /san, policies: [ { client-certificate: { sans: [ "spiffe://retail/till/7" ] } } ] }
      by_fingerprint: { methods: [GET], path: /fingerprint, policies: [ { client-certificate: { fingerprints_sha256: [ "${till7.fingerprint.toUpperCase().match(/../g)?.join(':') ?? ''}" ] } } ] }
      open: { methods: [GET], path: /open }
  plain_tills:
    type: proxy
    prefix: /plain
    envelope: payments
    upstream: { targets: [ "${backend.url}" ] }
    routes:
      any: { methods: [GET], path: /any, policies: [ { client-certificate: {} } ] }
`)
  gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
})

const REQUIRED = { error: 'client_certificate_required', message: 'This route requires a client certificate signed by the gateway\'s client CA.' }
const NOT_ALLOWED = { error: 'client_certificate_not_allowed', message: 'The client certificate is not allowed on this route.' }

async function viaCurl (path: string, client?: Issued): Promise<{ status: number, body: unknown }> {
  const auth = client === undefined ? [] : ['--cert', client.cert, '--key', client.key]
  const res = await curl(['--cacert', pki.caCert, ...auth, `${gateway.base}${path}`])
  if (res.code !== 0) throw new Error(`curl ${res.code}: ${res.stderr}`)
  return { status: res.status, body: res.body.startsWith('{') ? JSON.parse(res.body) : res.body }
}

t.test('a verified certificate passes; none is 401 in the route\'s envelope; a route without the policy stays open', async (t) => {
  t.same(await viaCurl('/tills/any', till12), { status: 200, body: 'pricing' })
  t.same(await viaCurl('/tills/any'), { status: 401, body: REQUIRED })
  t.same(await viaCurl('/plain/any'), { status: 401, body: { success: false, message: REQUIRED.message } })
  t.same(await viaCurl('/tills/open'), { status: 200, body: 'pricing' })
})

t.test('a certificate the client CA did not sign counts as none: 401', async (t) => {
  t.same(await viaCurl('/tills/any', stranger), { status: 401, body: REQUIRED })
  t.same(await viaCurl('/tills/subject', stranger), { status: 401, body: REQUIRED })
})

t.test('subjects, sans and fingerprints: a match passes, another certificate is 403', async (t) => {
  t.same(await viaCurl('/tills/subject', till12), { status: 200, body: 'pricing' })
  t.same(await viaCurl('/tills/subject', till7), { status: 403, body: NOT_ALLOWED })
  t.same(await viaCurl('/tills/san', till7), { status: 200, body: 'pricing' })
  t.same(await viaCurl('/tills/san', till12), { status: 403, body: NOT_ALLOWED })
  t.same(await viaCurl('/tills/fingerprint', till7), { status: 200, body: 'pricing' })
  t.same(await viaCurl('/tills/fingerprint', till12), { status: 403, body: NOT_ALLOWED })
})

t.test('node:https with a client certificate, several requests on one connection', async (t) => {
  const { Agent } = await import('node:https')
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, cert: readFileSync(till12.cert), key: readFileSync(till12.key) })
  t.teardown(() => agent.destroy())
  for (const path of ['/tills/any', '/tills/subject', '/tills/san']) {
    const answer = await httpsGet(`${gateway.base}${path}`, { agent })
    t.same([answer.status, answer.body], path === '/tills/san' ? [403, JSON.stringify(NOT_ALLOWED)] : [200, 'pricing'], path)
  }
})

t.test('validate refuses the policy without server.tls.client_ca_file', async (t) => {
  const { runNode } = await import('../helpers/run-node.js')
  const { repoPath } = await import('../helpers/paths.js')
  const file = join(pki.dir, 'no-client-ca.yaml')
  writeFileSync(file, `
server: { data_dir: ${join(pki.dir, 'data')} }
scopes:
  pricing:read: { description: Read prices }
services:
  tills:
    type: proxy
    prefix: /tills
    envelope: exchange
    upstream: { targets: [ "http://127.0.0.1:9" ] }
    routes:
      any: { methods: [GET], path: /any, policies: [ { client-certificate: {} } ] }
`)
  const res = await runNode(repoPath('bin/lanegate.js'), ['validate', file], { env: {} })
  t.equal(res.code, 1)
  t.match(res.stderr, /:12 services\.tills\.routes\.any\.policies\[0\]\.client-certificate: needs server\.tls\.client_ca_file/)
})
