import { X509Certificate } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'
import { freePort, spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'
import { curl, httpsGet, sClient } from '../helpers/tls-clients.js'
import { createTestPki } from '../helpers/test-pki.js'
import { startTlsRecordRelay } from '../helpers/tls-record-relay.js'

/**
 * The HTTPS listener (issue 21) on a real `lanegate start`: the certificate made at run time by a private CA
 * (openssl), its files named relative to the config's folder; curl, node:https and `openssl s_client` as clients.
 */

const pki = createTestPki('Lanegate Test CA')
t.teardown(() => pki.remove())
const gw = pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const ca = readFileSync(pki.caCert)

function config (tls: string, extra = ''): string {
  return `
server:
  data_dir: ${join(pki.dir, 'data')}
  tls: ${tls}
${extra}
admin: { port: 0 }
scopes:
  pricing:read: { description: Read prices }
`
}

async function start (t: Test, name: string, text: string, args?: string[]): Promise<SpawnedGateway> {
  const file = join(pki.dir, `${name}.yaml`)
  writeFileSync(file, text)
  const gateway = await spawnGateway({ config: file, args })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
  return gateway
}

t.test('serves HTTPS with the configured pair (paths relative to the config file), and the issuer defaults to https://', async (t) => {
  const port = await freePort()
  const gateway = await start(t, 'basic', config('{ cert_file: gw.crt, key_file: ./gw.key }'), ['--port', String(port), '--host', '127.0.0.1'])
  t.equal(gateway.base, `https://127.0.0.1:${port}`)

  const viaCurl = await curl(['--cacert', pki.caCert, `${gateway.base}/healthz`])
  t.equal(viaCurl.code, 0, viaCurl.stderr)
  t.equal(viaCurl.status, 200)
  t.same(JSON.parse(viaCurl.body), { status: 'ok', config_version: 1 })

  const viaNode = await httpsGet(`${gateway.base}/.well-known/oauth-authorization-server`, { ca, agent: false })
  t.equal(viaNode.status, 200)
  t.equal(viaNode.serial, gw.serial)
  t.equal((JSON.parse(viaNode.body) as { issuer: string }).issuer, `https://localhost:${port}`)

  // Without the private CA the certificate is not trusted: curl refuses (exit 60), nothing is served in clear.
  const untrusted = await curl([`${gateway.base}/healthz`])
  t.equal(untrusted.code, 60)
  // Plain HTTP to the TLS port is answered 400 (test/e2e/tls-plain-http), never served.
  const plain = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 'refused')
  t.equal(plain, 400)
})

t.test('openssl s_client: the certificate is served and verifies; TLS 1.0 and 1.1 are refused', async (t) => {
  const gateway = await start(t, 'versions', config('{ cert_file: gw.crt, key_file: gw.key }'))
  const ok = await sClient(gateway.port, ['-CAfile', pki.caCert])
  t.match(ok.output, /Verify return code: 0 \(ok\)/)
  t.match(ok.output, /subject=CN = localhost/)
  t.match(ok.output, /issuer=CN = Lanegate Test CA/)
  for (const version of ['-tls1', '-tls1_1']) {
    // SECLEVEL=0 lets this openssl offer the old versions at all: the refusal is the gateway's.
    const old = await sClient(gateway.port, ['-CAfile', pki.caCert, version, '-cipher', 'DEFAULT@SECLEVEL=0'])
    t.match(old.output, /alert protocol version/, `${version} refused`)
    t.match(old.output, /no peer certificate available[\s\S]*Cipher is \(NONE\)/, `${version}: no session`)
  }
  const tls12 = await sClient(gateway.port, ['-CAfile', pki.caCert, '-tls1_2'])
  t.match(tls12.output, /Protocol *: TLSv1\.2/)
})

t.test('min_version TLSv1.3 refuses TLS 1.2', async (t) => {
  const gateway = await start(t, 'tls13', config('{ cert_file: gw.crt, key_file: gw.key, min_version: TLSv1.3 }'))
  const tls12 = await sClient(gateway.port, ['-CAfile', pki.caCert, '-tls1_2'])
  t.match(tls12.output, /alert protocol version[\s\S]*Cipher is \(NONE\)/)
  const tls13 = await sClient(gateway.port, ['-CAfile', pki.caCert, '-tls1_3'])
  t.match(tls13.output, /Verify return code: 0 \(ok\)/)
  t.match(tls13.output, /TLSv1\.3/)
})

t.test('the certificate\'s not-after time is exported as lanegate_tls_certificate_expiry_timestamp_seconds', async (t) => {
  const gateway = await start(t, 'metric', config('{ cert_file: gw.crt, key_file: gw.key }'))
  const text = await (await fetch(`${gateway.admin ?? ''}/metrics`)).text()
  const notAfter = Math.floor(new Date(new X509Certificate(readFileSync(gw.cert)).validTo).getTime() / 1000)
  t.match(text, `lanegate_tls_certificate_expiry_timestamp_seconds{certificate="listener"} ${notAfter}\n`)
})

t.test('an answer over HTTPS keep-alive is one TLS record: head and body are encrypted and written together', async (t) => {
  const gateway = await start(t, 'records', config('{ cert_file: gw.crt, key_file: gw.key }'))
  const relay = await startTlsRecordRelay(gateway.port)
  t.teardown(() => relay.close())
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca, servername: 'localhost' })
  t.teardown(() => agent.destroy())
  const url = (path: string): string => `https://127.0.0.1:${relay.port}${path}`
  // The first request carries the handshake (and TLS 1.3's session tickets): counted from the second on.
  await httpsGet(url('/healthz'), { agent })
  for (const [path, status] of [['/healthz', 200], ['/nowhere', 404], ['/.well-known/oauth-authorization-server', 200]] as const) {
    const before = relay.records().length
    for (let i = 0; i < 5; i++) t.equal((await httpsGet(url(path), { agent })).status, status)
    t.same(relay.records().slice(before).map((record) => record.type), [23, 23, 23, 23, 23], `${path}: one application-data record per answer`)
  }
})

t.test('lanegate validate: missing and unparsable files, a key that does not match and an expired certificate are errors with path and line', async (t) => {
  const other = pki.issue('other', 'other')
  const expired = pki.issue('expired', 'localhost', { expired: true })
  writeFileSync(join(pki.dir, 'garbage.crt'), 'not a certificate\n')
  const cases: Array<[string, string, RegExp]> = [
    ['missing', '{ cert_file: nowhere.crt, key_file: gw.key }', /:4 server\.tls\.cert_file: .*nowhere\.crt: no such file$/],
    ['unparsable', '{ cert_file: garbage.crt, key_file: gw.key }', /:4 server\.tls\.cert_file: .*garbage\.crt: holds no PEM certificate/],
    ['bad-key', '{ cert_file: gw.crt, key_file: garbage.crt }', /:4 server\.tls\.key_file: .*garbage\.crt: not a PEM private key/],
    ['mismatch', `{ cert_file: gw.crt, key_file: ${other.key} }`, /:4 server\.tls\.key_file: .*other\.key: the key does not match the certificate in .*gw\.crt$/],
    ['expired', `{ cert_file: ${expired.cert}, key_file: ${expired.key} }`, /:4 server\.tls\.cert_file: .*expired\.crt: the certificate expired on 2020-01-31T00:00:00\.000Z$/],
    ['client-ca', '{ cert_file: gw.crt, key_file: gw.key, client_ca_file: nowhere-ca.crt }', /:4 server\.tls\.client_ca_file: .*nowhere-ca\.crt: no such file$/],
  ]
  for (const [name, tls, expected] of cases) {
    const file = join(pki.dir, `invalid-${name}.yaml`)
    writeFileSync(file, config(tls))
    const res = await runNode(repoPath('bin/lanegate.js'), ['validate', file], { env: {} })
    t.equal(res.code, 1, name)
    const lines = res.stderr.trim().split('\n')
    t.equal(lines.length, 2, `${name}: ${res.stderr}`)
    t.match(lines[0], new RegExp(`^error: ${file.replace(/[.]/g, '\\.')}${expected.source}`), name)
  }
})

t.test('lanegate validate warns about a certificate ending within 14 days, and http2 without tls is an error', async (t) => {
  const soon = pki.issue('soon', 'localhost', { days: 5 })
  const file = join(pki.dir, 'soon.yaml')
  writeFileSync(file, config(`{ cert_file: ${soon.cert}, key_file: ${soon.key} }`))
  const res = await runNode(repoPath('bin/lanegate.js'), ['validate', file], { env: {} })
  t.equal(res.code, 0, res.stderr)
  t.match(res.stdout + res.stderr, new RegExp(`${file.replace(/[.]/g, '\\.')}:4 server\\.tls\\.cert_file: .*soon\\.crt: the certificate expires on \\S+ \\(within 14 days\\): renew it`))

  const h2 = join(pki.dir, 'h2-plain.yaml')
  writeFileSync(h2, `
server:
  data_dir: ${join(pki.dir, 'data')}
  http2: true
scopes:
  pricing:read: { description: Read prices }
`)
  const refused = await runNode(repoPath('bin/lanegate.js'), ['validate', h2], { env: {} })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /:4 server\.http2: needs server\.tls: HTTP\/2 is offered by ALPN on the TLS listener/)
})

/**
 * Loaded by `--import` before the gateway: appends each synchronous read of a file under the PKI folder to a log
 * (the TLS files are read with readFileSync), then makes the ESM named export `readFileSync` the counting one.
 */
const COUNT_READS = (dir: string, log: string): string => `
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
const read = fs.readFileSync
fs.readFileSync = function countedRead (file, ...rest) {
  if (typeof file === 'string' && file.startsWith(${JSON.stringify(dir)}) && /\\.(crt|key)$/.test(file)) fs.appendFileSync(${JSON.stringify(log)}, file + '\\n')
  return read.call(this, file, ...rest)
}
syncBuiltinESMExports()
`

t.test('lanegate start reads the certificate, key and client CA once: validation\'s read is what the listener serves', async (t) => {
  const log = join(pki.dir, 'reads.log')
  const preload = join(pki.dir, 'count-reads.mjs')
  writeFileSync(preload, COUNT_READS(pki.dir, log))
  writeFileSync(log, '')
  const file = join(pki.dir, 'read-once.yaml')
  writeFileSync(file, config('{ cert_file: gw.crt, key_file: gw.key, client_ca_file: ca.crt }'))
  const gateway = await spawnGateway({ config: file, env: { NODE_OPTIONS: `--import ${preload}` } })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
  const answer = await httpsGet(`${gateway.base}/healthz`, { ca, agent: false })
  t.same([answer.status, answer.serial], [200, gw.serial])
  t.match(gateway.output(), new RegExp(`"serial":"${gw.serial}".*"msg":"TLS certificate loaded for new connections"`))
  t.same(readFileSync(log, 'utf8').split('\n').filter((line) => line !== ''), [gw.cert, gw.key, pki.caCert])
})
