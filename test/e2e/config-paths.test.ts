import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { runNode, type NodeRun } from '../helpers/run-node.js'
import { waitForText } from '../helpers/wait-for.js'

function run (args: string[], cwd: string): Promise<NodeRun> {
  return runNode(repoPath('bin/lanegate.js'), args, { cwd })
}

async function elsewhere (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-cwd-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('lanegate validate /abs/path/gateway.yaml works from another working directory', async (t) => {
  const cwd = await elsewhere(t)
  const res = await run(['validate', repoPath('gateway.yaml')], cwd)
  t.equal(res.code, 0, res.stderr)
  t.equal(res.stdout.trim(), `${repoPath('gateway.yaml')}: valid`)
})

t.test('data_dir (and the key dir under it) resolve against the config file\'s folder, not the working directory', async (t) => {
  const cwd = await elsewhere(t)
  const cfg = await gatewayFixture().set('server.data_dir', './state').write()
  t.teardown(() => cfg.remove())
  const gw = await spawnGateway({ config: cfg.file, cwd })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  t.ok(existsSync(join(cfg.dir, 'state', 'keys')), 'keys generated under <config folder>/state/keys')
  t.ok(existsSync(join(cfg.dir, 'state', 'lanegate.db')), 'SQLite under <config folder>/state')
  t.notOk(existsSync(join(cwd, 'state')), 'nothing written under the working directory')
  gw.child.kill('SIGTERM')
  t.equal(await gw.exited, 0)
})

t.test('a user token from another development key directory: 401, and an info line that says why (no token text)', async (t) => {
  const cwd = await elsewhere(t)
  const other = await gatewayFixture().set('server.data_dir', './data').write()
  const served = await gatewayFixture().set('server.data_dir', './data').write()
  t.teardown(() => Promise.all([other.remove(), served.remove()]))
  const mint = async (file: string): Promise<string> => {
    const res = await run(['user-token', '--config', file, '--sub', 'user_1', '--org', 'org_hq_demo', '--scope', 'exchange:live.read'], cwd)
    t.equal(res.code, 0, res.stderr)
    return res.stdout.trim()
  }
  const foreign = await mint(other.file)
  t.ok(existsSync(join(other.dir, 'data', 'dev-user-issuer')), 'the dev issuer key was made under the config\'s folder')
  const gw = await spawnGateway({ config: served.file, cwd })
  t.teardown(() => { gw.child.kill('SIGKILL') })
  const url = `${gw.base}/v1/stores/org_store_001/live/ping`
  const refused = await fetch(url, { headers: { authorization: `Bearer ${foreign}` } })
  t.equal(refused.status, 401)
  // The gateway's own dev issuer (same config folder) is accepted: the 401 above is about the key.
  const own = await mint(served.file)
  const accepted = await fetch(url, { headers: { authorization: `Bearer ${own}` } })
  t.not(accepted.status, 401)
  await waitForText(gw.output, 'no key of its issuer matches its kid', { what: 'the info line on the refused token' })
  const line = gw.output().split('\n').find((l) => l.includes('no key of its issuer matches its kid'))
  t.ok(line, 'an info line explains the refusal')
  t.match(JSON.parse(line ?? '{}'), { level: 30, issuer: 'http://localhost:8080/dev-users' })
  const [header, payload, signature] = foreign.split('.')
  for (const part of [header, payload, signature]) t.notOk(gw.output().includes(part ?? '\0'), 'no part of the token is logged')
})
