import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseDocument } from 'yaml'
import { bootGateway } from '../../src/start/boot.js'
import { parseLoadtestArgs } from '../../src/loadtest/options.js'
import { runLoadtest } from '../../src/loadtest/run-loadtest.js'
import { repoPath } from '../helpers/paths.js'
import { createTestPki } from '../helpers/test-pki.js'

/**
 * `lanegate loadtest --url https://…` against a gateway whose certificate a private CA signed: the token request
 * failed with "self-signed certificate in certificate chain" and there was no way to trust the CA. `--cacert`
 * trusts it for the run.
 */
const pki = createTestPki('Gateway CA')
t.teardown(() => pki.remove())
const gw = pki.issue('gw', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const dir = await mkdtemp(join(tmpdir(), 'lanegate-loadtest-tls-'))
const doc = parseDocument(await readFile(repoPath('gateway.yaml'), 'utf8'))
doc.setIn(['server', 'data_dir'], dir)
doc.setIn(['server', 'log_level'], 'silent')
doc.setIn(['server', 'tls'], { cert_file: gw.cert, key_file: gw.key })
doc.setIn(['services', 'content', 'source_dir'], repoPath('content'))
doc.setIn(['issuer', 'issuer'], 'https://127.0.0.1:1')
const booted = await bootGateway({ text: doc.toString() })
t.teardown(async () => {
  await booted.close()
  await rm(dir, { recursive: true, force: true })
})
await booted.app.listen({ port: 0, host: '127.0.0.1' })
const address = booted.app.server.address()
const url = `https://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
const args = ['--url', url, '--client', 'demo-content', '--secret', 'demo-content-secret', 'GET', '/public/v1/content', '-c', '2', '-d', '1']

t.test('--cacert FILE: the token is fetched over TLS signed by that CA, and the run is answered', async (t) => {
  const summary = await runLoadtest(parseLoadtestArgs(['--cacert', pki.caCert, ...args]))
  t.ok((summary.statusCounts['200'] ?? 0) > 0, `200s: ${JSON.stringify(summary.statusCounts)}`)
  t.same(Object.keys(summary.statusCounts).filter((s) => s !== '200' && s !== '429'), [], 'nothing but 200 (and the content limit\'s 429)')
})

t.test('without it the private CA is not trusted: the token request fails and says why', async (t) => {
  const error = await runLoadtest(parseLoadtestArgs(args)).catch((e: unknown) => e as Error)
  t.ok(error instanceof Error)
  const text = `${(error as Error).message} ${String(((error as Error).cause as Error | undefined)?.message ?? '')} ${String((((error as Error).cause as Error | undefined)?.cause as Error | undefined)?.message ?? '')}`
  t.match(text, /self[- ]signed certificate|unable to (get|verify)/)
})

t.test('a --cacert file that is not a certificate is refused by name', async (t) => {
  await t.rejects(runLoadtest(parseLoadtestArgs(['--cacert', repoPath('package.json'), ...args])), { message: `--cacert ${repoPath('package.json')}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)` })
  await t.rejects(runLoadtest(parseLoadtestArgs(['--cacert', join(dir, 'nope.crt'), ...args])), { message: /^--cacert .*nope\.crt: no such file$/ })
})
