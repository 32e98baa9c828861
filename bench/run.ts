import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseBenchArgs, USAGE, type BenchOptions } from './options.js'
import { REPO_ROOT } from './paths.js'
import { hasTaskset, startLoadWorker } from './processes.js'
import { summarizeProfiles } from './profile-summary.js'
import { markdownReport, runStamp } from './report.js'
import type { BenchResult, ScenarioResult } from './result-types.js'
import { runMemory, runPlan, type RunLog } from './run-scenario.js'
import { prepareScenario, type ScenarioPlan } from './scenarios.js'
import { checkTelemetryOutputs } from './telemetry-outputs.js'
import { ServerSet } from './servers.js'
import { checkTargets, DECIDING_METRIC } from './targets.js'
import { proxyServiceChecks } from './proxy-failover.js'
import { proxyMirrorChecks } from './proxy-mirror.js'
import { runWebSocket } from './websocket.js'
import { runConfigPush } from './config-push.js'
import { runInstructionPlan } from './instructions.js'

/**
 * `npm run bench`: the project's own benchmark (issue 6). Servers run pinned to core 0, the load generator (a
 * separate process running autocannon) to core 1; each scenario warms up, runs rounds in rotating order and is
 * reported against a baseline measured in the same run. Writes <out>/<date>.json and <date>.md; exits 1 when a
 * run saw a status or error it must not (timings never fail the run).
 */

const SERVER_CORE = 0
const LOADGEN_CORE = 1

function pinning (options: BenchOptions, warn: (m: string) => void): boolean {
  if (!options.pin) {
    warn('not pinned (--no-pin): servers and load generator share the cores; ratios are less stable')
    return false
  }
  if (cpus().length < 2 || !hasTaskset()) {
    warn(`not pinned: needs 2 cores and taskset (have ${cpus().length} core${cpus().length === 1 ? '' : 's'}${hasTaskset() ? '' : ', no taskset'})`)
    return false
  }
  // The orchestrator only waits; it shares the load generator's core so the server core stays quiet.
  execFileSync('taskset', ['-a', '-cp', String(LOADGEN_CORE), String(process.pid)], { stdio: 'ignore' })
  return true
}

/** `--telemetry`: the result with what its trace and access-log variants put out, checked (telemetry-outputs.ts). */
async function withTelemetryChecked (plan: ScenarioPlan, result: ScenarioResult, log: RunLog): Promise<ScenarioResult> {
  return plan.telemetry === undefined ? result : { ...result, telemetry: await checkTelemetryOutputs(plan.telemetry, result, log) }
}

/** Runs the benchmark; resolves to the exit code. */
export async function runBench (argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE)
    return 0
  }
  let options: BenchOptions
  try {
    options = parseBenchArgs(argv)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`)
    return 2
  }
  const startedAt = new Date()
  const failures: string[] = []
  const warnings: string[] = []
  const log: RunLog = {
    progress: (line) => process.stderr.write(`${line}\n`),
    fail: (message) => { failures.push(message); process.stderr.write(`FAIL ${message}\n`) },
    warn: (message) => { warnings.push(message); process.stderr.write(`warning: ${message}\n`) },
  }
  const pinned = pinning(options, log.warn)
  const workRoot = await mkdtemp(join(tmpdir(), 'lanegate-bench-'))
  const profileDir = options.profile ? join(workRoot, 'profiles') : undefined
  if (profileDir !== undefined) await mkdir(profileDir)
  // --instructions: callgrind's dumps, kept with the logs when the run fails.
  const callgrindDir = options.instructions ? join(workRoot, 'callgrind') : undefined
  if (callgrindDir !== undefined) await mkdir(callgrindDir)
  const demoText = await readFile(join(REPO_ROOT, 'gateway.yaml'), 'utf8')
  const worker = startLoadWorker(pinned ? LOADGEN_CORE : undefined, join(workRoot, 'load-generator.log'))
  const scenarios: ScenarioResult[] = []
  let current: ServerSet | undefined
  const interrupt = (): void => { void current?.stopAll().finally(() => process.exit(130)) }
  process.once('SIGINT', interrupt)
  try {
    for (const id of options.scenarios) {
      const workDir = join(workRoot, id)
      await mkdir(workDir)
      // The latency scenarios' Node servers carry the GC preload; the throughput scenarios' stay bare.
      // A folder per scenario: its servers' names (gateway-main, lane) come back in the next one, whose dumps would
      // otherwise overwrite the numbered dumps of the last.
      const scenarioCallgrindDir = callgrindDir === undefined ? undefined : join(callgrindDir, id)
      if (scenarioCallgrindDir !== undefined) await mkdir(scenarioCallgrindDir)
      current = new ServerSet({ workDir, core: pinned ? SERVER_CORE : undefined, demoText, profileDir, compareRoot: options.compare, pollerCore: pinned ? LOADGEN_CORE : undefined, callgrindDir: scenarioCallgrindDir, watchGc: !options.instructions && (id === 'latency-c1' || id === 'proxy-mirror'), countHeap: !options.instructions, ...(options.signingAlg === undefined ? {} : { signingAlgorithm: options.signingAlg }) })
      log.progress(`== ${id}`)
      try {
        if (options.instructions) {
          // options.ts let only request-per-request scenarios through: never memory or websocket.
          const plan = await prepareScenario(id as Exclude<typeof id, 'memory'>, current, options)
          scenarios.push(await withTelemetryChecked(plan, await runInstructionPlan(plan, options, log), log))
        } else if (id === 'memory') {
          scenarios.push(await runMemory(current, worker, options, workDir, log))
        } else if (id === 'config-push') {
          scenarios.push(await runConfigPush(workDir, log))
        } else if (id === 'websocket') {
          scenarios.push(await runWebSocket(current, options, log))
        } else {
          const plan = await prepareScenario(id, current, options)
          const result = await withTelemetryChecked(plan, await runPlan(plan, worker, options, log), log)
          if (id === 'proxy-service') await proxyServiceChecks(result, plan, current, worker, options, log)
          if (id === 'proxy-mirror') await proxyMirrorChecks(result, plan, current, log)
          scenarios.push(result)
        }
      } catch (error) {
        log.fail(`${id}: ${(error as Error).message} (logs in ${workDir})`)
      } finally {
        await current.stopAll()
      }
    }
  } finally {
    process.off('SIGINT', interrupt)
    await worker.close()
  }

  const cpu = cpus()
  const result: BenchResult = {
    harness: 'lanegate-bench',
    schemaVersion: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      pinned,
      ...(pinned ? { serverCore: SERVER_CORE, loadgenCore: LOADGEN_CORE } : {}),
    },
    options: Object.fromEntries(Object.entries(options).filter(([key]) => key !== 'outDir')),
    decidingMetric: DECIDING_METRIC,
    scenarios,
    targets: checkTargets(scenarios),
    failures,
    warnings,
  }
  const markdown = markdownReport(result)
  await mkdir(options.outDir, { recursive: true })
  const base = join(options.outDir, runStamp(startedAt))
  await writeFile(`${base}.json`, JSON.stringify(result, null, 2) + '\n')
  await writeFile(`${base}.md`, markdown + '\n')
  process.stdout.write(`${markdown}\nWrote ${base}.json and ${base}.md\n`)
  if (profileDir !== undefined) {
    const summary = summarizeProfiles(profileDir)
    await writeFile(`${base}-profile.txt`, summary)
    process.stdout.write(`\nProfiles kept in ${profileDir}; hot spots in ${base}-profile.txt\n`)
  }
  if (failures.length > 0) {
    process.stderr.write(`\nBENCH FAILED: ${failures.length} run(s) broke an expectation (logs kept in ${workRoot}):\n${failures.map((f) => `  - ${f}`).join('\n')}\n`)
    return 1
  }
  if (callgrindDir !== undefined) process.stdout.write(`\nCallgrind dumps kept in ${callgrindDir} (<scenario>/<server>.callgrind.<n>, one per batch): callgrind_annotate <file> lists where the instructions went; node dist/bench/callgrind-names.js <file> <requests> names the JIT code too\n`)
  if (profileDir === undefined && callgrindDir === undefined) await rm(workRoot, { recursive: true, force: true })
  return 0
}

runBench(process.argv.slice(2)).then((code) => { process.exitCode = code }, (error: unknown) => {
  process.stderr.write(`BENCH FAILED: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})

