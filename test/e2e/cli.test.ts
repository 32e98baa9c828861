import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseSecretHash, verifySecret } from '../../src/secrets/secret-hash.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { runNode, type NodeRun } from '../helpers/run-node.js'

const BIN = repoPath('bin/lanegate.js')

function run (args: string[], input?: string, env: NodeJS.ProcessEnv = {}): Promise<NodeRun> {
  return runNode(BIN, args, { input: input ?? '', env })
}

t.test('--help explains each command', async (t) => {
  const res = await run(['--help'])
  t.equal(res.code, 0)
  for (const command of ['start', 'validate', 'hash-secret', 'user-token']) t.match(res.stdout, command)
  const sub = await run(['help', 'validate'])
  t.match(sub.stdout, /lanegate validate FILE/)
})

t.test('--version and -v print the package version', async (t) => {
  const { version } = JSON.parse(await readFile(repoPath('package.json'), 'utf8')) as { version: string }
  for (const flag of ['--version', '-v']) {
    const res = await run([flag])
    t.equal(res.code, 0)
    t.equal(res.stdout, `${version}\n`)
  }
})

t.test('validate accepts the shipped demo config', async (t) => {
  const res = await run(['validate', repoPath('gateway.yaml')])
  t.equal(res.code, 0, res.stderr)
  t.match(res.stdout, /gateway\.yaml: valid/)
})

t.test('validate lists every error with its YAML path and line, and exits 1', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const broken = gatewayFixture()
    .set('server.prot', 1)
    .rename('services.payments.policies.2.token-type', 'token-typo')
    .text()
  const file = join(dir, 'broken.yaml')
  await writeFile(file, broken)
  const res = await run(['validate', file])
  t.equal(res.code, 1)
  const lines = res.stderr.trim().split('\n')
  // Both passes together: the typo'd key and the unknown service-level policy (reported once, not per route).
  t.equal(lines.length, 3)
  t.match(lines[0], new RegExp(`^error: ${file.replace(/[.]/g, '\\.')}:\\d+ server\\.prot: unknown key "prot"$`))
  t.match(lines[1], new RegExp(`^error: ${file.replace(/[.]/g, '\\.')}:\\d+ services\\.payments\\.policies\\[2\\]\\.token-typo: unknown policy "token-typo"`))
  t.match(lines[2], /: 2 errors$/)
})

t.test('hash-secret hashes stdin into a PHC string that verifies', async (t) => {
  const res = await run(['hash-secret'], 'correct horse battery staple\n')
  t.equal(res.code, 0)
  const hash = res.stdout.trim()
  t.match(hash, /^\$scrypt\$ln=15,r=8,p=1\$/)
  const parsed = parseSecretHash(hash)
  t.ok(parsed)
  t.equal(await verifySecret('correct horse battery staple', parsed!), true)
  t.equal(await verifySecret('correct horse battery stapl', parsed!), false)
  t.notOk(res.stdout.includes('correct horse'), 'the secret is not echoed')
  const empty = await run(['hash-secret'], '')
  t.equal(empty.code, 1)
})

t.test('start serves the config, and SIGTERM shuts it down cleanly', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-start-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const { child, port, output, exited } = await spawnGateway({ env: { LANEGATE_DATA_DIR: dir } })
  const health = await fetch(`http://127.0.0.1:${port}/healthz`)
  t.equal(health.status, 200)
  const token = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('demo-status:demo-status-secret').toString('base64')}` },
    body: 'grant_type=client_credentials',
  })
  t.equal(token.status, 200)
  child.kill('SIGTERM')
  t.equal(await exited, 0)
  t.notOk(output().includes('demo-status-secret'))
})

t.test('user-token mints a user token the gateway accepts on user routes and refuses on service-only routes', async (t) => {
  const { buildTestApp } = await import('../helpers/build-app.js')
  const gw = await buildTestApp()
  t.teardown(() => gw.close())
  const res = await run(['user-token', '--config', repoPath('gateway.yaml'), '--sub', 'user_1', '--org', 'org_hq_demo', '--scope', 'exchange:hostfile.author exchange:fanout.preview'],
    undefined, { LANEGATE_DATA_DIR: gw.dataDir })
  t.equal(res.code, 0, res.stderr)
  const token = res.stdout.trim()
  t.match(token, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/)
  const author = await gw.app.inject({
    method: 'POST', url: '/v1/hostfile/files/author', headers: { authorization: `Bearer ${token}` },
    payload: { records: [{ record_type: 'Department', action_code: 'A', department_code: '10', description: 'Grocery' }] },
  })
  t.equal(author.statusCode, 200, author.body)
  const fanout = await gw.app.inject({
    method: 'POST', url: '/v1/fanout/preview', headers: { authorization: `Bearer ${token}` },
    payload: { operation_type: 'x', payload: {}, store_org_ids: ['org_store_001'] },
  })
  t.equal(fanout.statusCode, 401)
  t.same(fanout.json(), { error: 'invalid_token_type', message: 'This endpoint does not accept this type of token.' })
  t.equal(fanout.headers['www-authenticate'], 'Bearer realm="lanegate", error="invalid_token", error_description="wrong token type"')
  const unknownScope = await run(['user-token', '--config', repoPath('gateway.yaml'), '--sub', 'u', '--org', 'org_hq_demo', '--scope', 'nope:x'], undefined, { LANEGATE_DATA_DIR: gw.dataDir })
  t.equal(unknownScope.code, 1)
  t.match(unknownScope.stderr, /unknown scope: nope:x/)
})
