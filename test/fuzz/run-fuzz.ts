import { FUZZ_CLASSES, runGatewayFuzz, type FuzzClass } from './gateway-properties.js'

/**
 * `npm run fuzz [-- --runs N] [--seed S]`: the fuzz properties with many runs (default 2000 per class; the token
 * form class half of that: a case with a known client costs a scrypt hash), then a table of figures. Exits 1 when a
 * property failed.
 */
function argValue (name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}

const runs = Number(argValue('runs') ?? process.env.LANEGATE_FUZZ_RUNS ?? 2000)
const seed = Number(argValue('seed') ?? process.env.LANEGATE_FUZZ_SEED ?? Date.now() % 2 ** 31)
const perClass: Record<FuzzClass, number> = { token_form: Math.max(1, Math.round(runs / 2)), bearer_token: runs, lane_path: runs, payment_body: runs }

const started = Date.now()
const figures = await runGatewayFuzz({ seed, runs: perClass })
const seconds = ((Date.now() - started) / 1000).toFixed(1)
console.log(`lanegate fuzz: seed ${seed}, ${seconds} s`)
console.log('| class | cases | 2xx | 3xx | 4xx | 5xx (gateway) | relayed lane 5xx | envelope violations | not sendable |')
console.log('|---|---|---|---|---|---|---|---|---|')
let failed = false
for (const cls of FUZZ_CLASSES) {
  const f = figures.classes[cls]
  const s = (k: string): number => f.statuses[k] ?? 0
  console.log(`| ${cls} | ${f.cases} | ${s('2xx')} | ${s('3xx')} | ${s('4xx')} | ${f.server_errors} | ${s('5xx') - f.server_errors} | ${f.envelope_violations} | ${f.unsendable} |`)
  if (f.counterexample !== undefined) {
    failed = true
    console.log(`  ${cls} counterexample: ${f.counterexample}`)
  }
}
console.log(`error-level log lines (crashes, unexpected failures): ${figures.error_log_lines}; alive at the end: ${figures.alive}`)
if (failed || figures.error_log_lines > 0 || !figures.alive) process.exitCode = 1
