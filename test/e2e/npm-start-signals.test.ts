import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { npmStart } from '../helpers/npm-start.js'
import { freePort } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor as waitUntil } from '../helpers/wait-for.js'

/** Waits for `check`, failing with what was awaited when `ms` pass first. */
async function waitFor (check: () => boolean, ms: number, what: string): Promise<void> {
  await waitUntil(check, { what, timeoutMs: ms })
}

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

/** Runs `lanegate <args>` to completion; resolves with its exit code and output. */
function cli (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null, out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [repoPath('bin/lanegate.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { out += d.toString() })
    child.on('exit', (code) => resolve({ code, out }))
  })
}

t.test('npm start: the gateway writes its pid; lanegate reload reaches it (logged even with no change); SIGTERM to npm stops it', async (t) => {
  const cfg = await gatewayFixture().write()
  t.teardown(() => cfg.remove())
  const pidFile = join(cfg.dir, 'data', 'lanegate.pid')
  const npm = npmStart(cfg.file, await freePort())
  t.teardown(() => { npm.child.kill('SIGKILL') })
  await waitFor(() => existsSync(pidFile) && /Admin listening on/.test(npm.output()), 30_000, 'the pid file and the admin listener')
  const pid = Number(readFileSync(pidFile, 'utf8').trim())
  t.not(pid, npm.child.pid, 'the pid file names the gateway, not npm')
  t.ok(alive(pid), 'the named process runs')
  t.match(npm.output(), `signal pid ${pid} (in ${pidFile}): SIGHUP reloads, SIGTERM stops`)

  // A SIGHUP with nothing changed says so (it used to log nothing).
  const reload = await cli(['reload', '--config', cfg.file])
  t.same(reload, { code: 0, out: `reload: sent SIGHUP to pid ${pid}\n` })
  await waitFor(() => /config reload: no change \(version 1 stays\)/.test(npm.output()), 10_000, 'the no-change reload line')
  // The same gateway found by its data dir alone, no config file read.
  const byDir = await cli(['reload', '--data-dir', join(cfg.dir, 'data'), '--config', join(cfg.dir, 'missing.yaml')])
  t.same(byDir, { code: 0, out: `reload: sent SIGHUP to pid ${pid}\n` })
  t.ok(alive(npm.child.pid!), 'npm is untouched by the reload')

  // SIGTERM to npm (what `kill $!` after `npm start &` sends) reaches the gateway: it drains and exits, pid file gone.
  npm.child.kill('SIGTERM')
  const code = await npm.exited
  await waitFor(() => !alive(pid), 10_000, 'the gateway to exit')
  t.match(npm.output(), /shutting down: finishing in-flight requests/)
  t.match(npm.output(), /"msg":"stopped"/)
  t.notOk(existsSync(pidFile), 'the pid file is removed at exit')
  t.ok(code === 0 || code === null, `npm ended (${code})`)
})

t.test('lanegate reload / stop without a running gateway say why and exit 1', async (t) => {
  const cfg = await gatewayFixture().write()
  t.teardown(() => cfg.remove())
  const reload = await cli(['reload', '--config', cfg.file])
  t.same(reload, { code: 1, out: `reload: no ${join(cfg.dir, 'data', 'lanegate.pid')}: is a gateway running with this config?\n` })
  const stop = await cli(['stop', '--config', join(cfg.dir, 'missing.yaml')])
  t.equal(stop.code, 1)
  t.match(stop.out, /^stop: cannot read .*missing\.yaml: ENOENT/)
  // --data-dir names the pid file's folder without any config file (a gateway following a config store reads none).
  const byDir = await cli(['stop', '--data-dir', join(cfg.dir, 'elsewhere'), '--config', join(cfg.dir, 'missing.yaml')])
  t.same(byDir, { code: 1, out: `stop: no ${join(cfg.dir, 'elsewhere', 'lanegate.pid')}: is a gateway running with this config?\n` })
  // An explicit --data-dir wins over LANEGATE_PID_FILE; without it the env's file is read.
  const env = { LANEGATE_PID_FILE: join(cfg.dir, 'own.pid') }
  const dirOverEnv = await cli(['reload', '--data-dir', join(cfg.dir, 'elsewhere')], env)
  t.same(dirOverEnv, { code: 1, out: `reload: no ${join(cfg.dir, 'elsewhere', 'lanegate.pid')}: is a gateway running with this config?\n` })
  const byEnv = await cli(['reload', '--config', join(cfg.dir, 'missing.yaml')], env)
  t.same(byEnv, { code: 1, out: `reload: no ${join(cfg.dir, 'own.pid')}: is a gateway running with this config?\n` })
})
