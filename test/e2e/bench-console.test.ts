import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { processTree } from '../../bench/proc-stat.js'
import { hasTaskset } from '../../bench/processes.js'
import { ServerSet } from '../../bench/servers.js'
import { repoPath } from '../helpers/paths.js'

/** A field of /proc/<pid>/status (PPid, Cpus_allowed_list). */
function statusField (pid: number, name: string): string {
  const match = new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match?.[1]?.trim() ?? ''
}

// `--console` measured the poller as part of the gateway: it was the gateway's child, inside the process tree whose
// CPU the load generator reads, and on the gateway's pinned core. Now it is the orchestrator's, on its own core.
t.test('the console poller runs outside the gateway\'s process tree, on the core it was given, and gets answers', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const workDir = await mkdtemp(join(tmpdir(), 'lanegate-bench-console-'))
  // The gateway stays unpinned here; the poller goes to the last core when taskset can pin it.
  const pollerCore = hasTaskset() && cpus().length > 1 ? cpus().length - 1 : undefined
  const servers = new ServerSet({ workDir, demoText: await readFile(repoPath('gateway.yaml'), 'utf8'), pollerCore })
  t.teardown(async () => {
    await servers.stopAll()
    await rm(workDir, { recursive: true, force: true })
  })
  const gateway = await servers.gateway('console')
  const poller = await servers.consolePoller()
  t.match(gateway.adminUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
  t.not(poller.pid, 0)
  t.notOk(processTree(gateway.pid).includes(poller.pid), 'the poller is not in the tree whose CPU is billed to the gateway')
  t.equal(statusField(poller.pid, 'PPid'), String(process.pid), 'the orchestrator started it')
  if (pollerCore !== undefined) t.equal(statusField(poller.pid, 'Cpus_allowed_list'), String(pollerCore))
  t.same(poller.polls(), { ok: poller.polls().ok, failed: 0, running: true })
  t.ok(poller.polls().ok >= 1, 'a first round of polls was answered')
  // The console the poller reads is the gateway's own.
  const overview = await fetch(`${gateway.adminUrl}/api/console/overview`)
  t.equal(overview.status, 200)
  t.ok(Array.isArray((await overview.json() as { series: unknown }).series))
})
