import t from 'tap'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { openConfigStore, sha256 } from '../../src/config-store/config-store.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'
import { processorNeeds } from '../helpers/config-fleet.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('lanegate config', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  t.teardown(() => db.drop())
  const fixture = gatewayFixture()
  const config = await fixture.write()
  t.teardown(() => config.remove())
  const cli = (...args: string[]): ReturnType<typeof runNode> => runNode(repoPath('bin/lanegate.js'), ['config', ...args], { env: { LANEGATE_CONFIG_STORE: db.url, LANEGATE_CONFIG_AUTHOR: '' } })
  const store = await openConfigStore(db.url)
  t.teardown(() => store.close())
  const original = await readFile(config.file, 'utf8')

  t.test('push stores the file exactly as written (${ENV} kept), as version 1 by --author', async (t) => {
    const run = await cli('push', config.file, '-m', 'first fleet config', '--author', 'ana', '--if-version', '0')
    t.same([run.code, run.stdout, run.stderr], [0, `pushed ${config.file} as version 1 (sha256 ${sha256(original).slice(0, 12)}, parent -)\n`, ''])
    const head = await store.head()
    t.match(head, { version: 1, text: original, author: 'ana', message: 'first fleet config' })
    t.match(head?.text, /port: \$\{LANEGATE_PORT:-8080\}/)
  })

  t.test('an invalid file is refused with its path and line, exit 2, and nothing is stored', async (t) => {
    const bad = join(config.dir, 'bad.yaml')
    await writeFile(bad, fixture.set('issuer.algorithm', 'HS1024').text())
    const run = await cli('push', bad, '-m', 'typo')
    t.equal(run.code, 2)
    t.match(run.stderr, new RegExp(`^error: ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+ issuer\\.algorithm: must be one of: `, 'm'))
    t.match(run.stderr, /bad\.yaml: 1 error; nothing stored\n$/)
    t.equal(await store.headVersion(), 1)
  })

  t.test('--if-version with a head that moved: exit 3, a clear conflict, nothing stored', async (t) => {
    const run = await cli('push', config.file, '-m', 'stale', '--if-version', '0')
    t.same([run.code, run.stdout, run.stderr], [3, '', 'config: conflict: the head is version 1, not 0: someone pushed meanwhile (pull, merge, push again)\n'])
    t.equal(await store.headVersion(), 1)
  })

  t.test('two CLI pushes with the same --if-version at once: exactly one wins, the other exits 3', async (t) => {
    await config.write(fixture.set('server.log_level', 'warn'))
    const runs = await Promise.all([
      cli('push', config.file, '-m', 'one', '--if-version', '1'),
      cli('push', config.file, '-m', 'two', '--if-version', '1'),
    ])
    t.same(runs.map((r) => r.code).sort(), [0, 3])
    t.equal(await store.headVersion(), 2)
  })

  t.test('pull prints a version exactly; -o writes it to a file', async (t) => {
    const one = await cli('pull', '1')
    t.same([one.code, one.stdout], [0, original])
    const out = join(config.dir, 'pulled.yaml')
    const head = await cli('pull', '-o', out)
    t.same([head.code, head.stderr], [0, `version 2 written to ${out}\n`])
    t.equal(await readFile(out, 'utf8'), (await store.get(2))?.text)
  })

  t.test('show prints the record then the text; a missing version exits 5', async (t) => {
    const shown = await cli('show', '1')
    const v = await store.get(1)
    t.equal(shown.code, 0)
    t.equal(shown.stdout, `version: 1\nparent: -\nsha256: ${v?.sha256}\nauthor: ana\ntime: ${new Date(v?.createdAt ?? 0).toISOString().replace(/\.\d{3}Z$/, 'Z')}\nmessage: first fleet config\n\n${original}`)
    const missing = await cli('show', '9')
    t.same([missing.code, missing.stderr], [5, 'config: no version 9 in the store (the head is 2)\n'])
  })

  t.test('diff: unified, exit 1 when they differ, 0 when equal', async (t) => {
    const last = await cli('diff')
    t.equal(last.code, 1)
    t.match(last.stdout, /^--- version 1\n\+\+\+ version 2\n@@ [^\n]+ @@\n/)
    t.match(last.stdout, /\n-  log_level: \$\{LANEGATE_LOG_LEVEL:-info\}[^\n]*\n\+  log_level: warn /)
    const same = await cli('diff', config.file)
    t.same([same.code, same.stdout], [0, ''])
    const versions = await cli('diff', '2', '1')
    t.match(versions.stdout, /^--- version 2\n\+\+\+ version 1\n/)
  })

  t.test('diff --effect: what the change does, from the explain engine; exit 1 when it affects a route, 0 when not', async (t) => {
    const scoped = join(config.dir, 'scoped.yaml')
    await writeFile(scoped, processorNeeds(fixture, 'create').text())
    const run = await cli('diff', '--effect', '1', scoped)
    t.equal(run.code, 1, run.stderr)
    t.match(run.stdout, /^chains changed:\n  ~ GET \/api\/v1\/ecommerce\/config\/processor \(payments\/processor_config\)\n[^]*\naccess:\n  GET \/api\/v1\/ecommerce\/config\/processor \(payments\/processor_config\)\n      loses: demo-status\n$/)
    // Versions 1 and 2 differ in log_level only: no route is affected.
    const none = await cli('diff', '--effect', '1', '2')
    t.same([none.code, none.stdout], [0, 'no effect on routes, chains or access from version 1 to version 2\n'])
  })

  t.test('rollback: a new version with the old text; history shows who and why', async (t) => {
    const run = await cli('rollback', '1', '-m', 'warn hid the incident', '--author', 'bo')
    t.same([run.code, run.stdout], [0, `version 3 restores version 1 (sha256 ${sha256(original).slice(0, 12)})\n`])
    t.match(await store.get(3), { text: original, parent: 2, rollbackOf: 1, author: 'bo', message: 'warn hid the incident' })
    const history = await cli('history')
    t.equal(history.code, 0)
    const lines = history.stdout.trimEnd().split('\n')
    t.equal(lines.length, 3)
    t.match(lines[0], new RegExp(`^3\\t${sha256(original).slice(0, 12)}\\t\\d{4}-\\d\\d-\\d\\dT[\\d:]+Z\\tbo\\twarn hid the incident \\(rollback to 1\\)$`))
    t.match(lines[2], /^1\t[0-9a-f]{12}\t[^\t]+\tana\tfirst fleet config$/)
  })

  t.test('status: exit 1 with no live instance, 0 once every live instance runs the head', async (t) => {
    const none = await cli('status')
    t.same([none.code, none.stdout], [1, 'head: version 3\nno live instance (none sent a heartbeat in the last 15 s)\nnot converged\n'])
    const applied = { version: 3, sha256: sha256(original), at: Date.now() }
    await store.report({ instanceId: 'h1:100', worker: 1, host: 'h1', pid: 101, startedAt: 1, applied })
    await store.report({ instanceId: 'h1:100', worker: 2, host: 'h1', pid: 102, startedAt: 1, applied: { ...applied, version: 2 } })
    const behind = await cli('status')
    t.equal(behind.code, 1)
    t.match(behind.stdout, /^head: version 3\nh1:100\thost h1\tpid 100\t2 workers\tworkers differ\theartbeat \d+ s ago\tBEHIND\nnot converged\n$/)
    // Both workers report afresh before each CLI run: on a loaded machine one run can outlast the 15 s liveness window.
    const bothOnHead = async (): Promise<void> => {
      for (const worker of [1, 2]) await store.report({ instanceId: 'h1:100', worker, host: 'h1', pid: 100 + worker, startedAt: 1, applied })
    }
    await bothOnHead()
    const converged = await cli('status')
    t.equal(converged.code, 0)
    t.match(converged.stdout, /\t2 workers\tversion 3 since [^\t]+\theartbeat \d+ s ago\tok\nconverged: every live instance runs version 3\n$/)
    // The history names the instances running a version.
    await bothOnHead()
    t.match((await cli('history')).stdout, /^3\t[^\n]*\t\[running on h1:100\]\n/)
  })

  t.test('push takes relative paths from the working directory, as the instances will: the shipped file copied elsewhere (source_dir: ./content) is valid from the repository', async (t) => {
    const copy = join(config.dir, 'elsewhere', 'gateway.yaml')
    await mkdir(join(config.dir, 'elsewhere'))
    await writeFile(copy, await readFile(repoPath('gateway.yaml'), 'utf8'))
    const head = await store.headVersion()
    const run = await cli('push', copy, '-m', 'relative paths from the working directory')
    t.same([run.code, run.stderr], [0, ''])
    t.equal(await store.headVersion(), head + 1)
  })

  t.test('usage errors exit 64; an unreachable store exits 4 without its password', async (t) => {
    const noMessage = await cli('push', config.file)
    t.same([noMessage.code, noMessage.stderr], [64, 'config: -m MSG is required: say why\n'])
    const noStore = await runNode(repoPath('bin/lanegate.js'), ['config', 'status'], { env: { LANEGATE_CONFIG_STORE: '' } })
    t.same([noStore.code, noStore.stderr], [64, 'config: no store: pass --store URL or set LANEGATE_CONFIG_STORE\n'])
    const down = await cli('status', '--store', 'postgres://ops:hunter2@127.0.0.1:1/x')
    t.equal(down.code, 4)
    t.match(down.stderr, /^config: config store postgres:\/\/ops:\*\*\*@127\.0\.0\.1:1\/x unreachable: /)
    t.notMatch(down.stderr, /hunter2/)
    const help = await runNode(repoPath('bin/lanegate.js'), ['config', '--help'])
    t.match([help.code, help.stdout], [0, /^lanegate config <subcommand> \[--store URL\]/])
  })
}
