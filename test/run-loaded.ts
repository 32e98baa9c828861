/**
 * `npm run test:loaded`: the test suite on a machine kept busy, several runs in a row — the check that the tests
 * wait on events and not on the clock (a red run here is a test that times the machine).
 *
 *   npm run test:loaded                                  # npm test, 3 runs, every core busy
 *   npm run test:loaded -- --runs 1 --cpu 1              # fewer runs, one busy core
 *   npm run test:loaded -- dist/test/e2e/signals.test.js # only these files (tap), 3 runs
 *
 * The load is `stress-ng --cpu N` when it is installed (apt-get install stress-ng), otherwise N node processes
 * spinning; it is started with a timeout of its own and stopped when the runs end, even on Ctrl-C.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { availableParallelism } from 'node:os'

interface Options { runs: number, cpu: number, files: string[] }

function parseOptions (argv: string[]): Options {
  const options: Options = { runs: 3, cpu: availableParallelism(), files: [] }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--runs' || arg === '--cpu') {
      const value = Number(argv[++i])
      if (!Number.isInteger(value) || value < 1) throw new Error(`${arg} needs a whole number ≥ 1`)
      if (arg === '--runs') options.runs = value
      else options.cpu = value
    } else {
      options.files.push(arg)
    }
  }
  return options
}

/** Starts the load: stress-ng if present, otherwise spinning node processes. Each ends by itself after `seconds`. */
function startLoad (cpu: number, seconds: number): { name: string, stop: () => void } {
  const stressNg = spawnSync('stress-ng', ['--version'], { stdio: 'ignore' }).status === 0
  const children: ChildProcess[] = stressNg
    ? [spawn('stress-ng', ['--cpu', String(cpu), '--timeout', `${seconds}s`, '--quiet'], { stdio: 'ignore', detached: true })]
    : Array.from({ length: cpu }, () => spawn(process.execPath, ['-e', `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`], { stdio: 'ignore', detached: true }))
  function stop (): void {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue
      // Its own process group (detached): stress-ng's workers go with it.
      try { process.kill(-child.pid, 'SIGTERM') } catch { /* already gone */ }
    }
  }
  return { name: stressNg ? `stress-ng --cpu ${cpu}` : `${cpu} spinning node processes (stress-ng not installed)`, stop }
}

function runOnce (files: string[]): Promise<number> {
  const [command, args] = files.length === 0 ? ['npm', ['test']] : ['npx', ['tap', ...files]]
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' })
    child.on('exit', (code) => resolve(code ?? 1))
  })
}

async function main (): Promise<number> {
  const options = parseOptions(process.argv.slice(2))
  // Long enough for the slowest runs (npm test takes ~500 s on an idle 2-core machine); stopped at the end anyway.
  const load = startLoad(options.cpu, options.runs * 1800)
  const stopOnSignal = (): void => { load.stop(); process.exit(130) }
  process.once('SIGINT', stopOnSignal)
  process.once('SIGTERM', stopOnSignal)
  const what = options.files.length === 0 ? 'npm test' : `tap ${options.files.join(' ')}`
  console.log(`test:loaded: ${options.runs} run(s) of ${what} beside ${load.name}`)
  const results: number[] = []
  try {
    for (let run = 1; run <= options.runs; run++) {
      const started = Date.now()
      const code = await runOnce(options.files)
      results.push(code)
      console.log(`test:loaded: run ${run} of ${options.runs}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${Math.round((Date.now() - started) / 1000)} s`)
    }
  } finally {
    load.stop()
  }
  const passed = results.filter((code) => code === 0).length
  console.log(`test:loaded: ${passed} of ${options.runs} run(s) passed under load`)
  return passed === options.runs ? 0 : 1
}

process.exitCode = await main()
