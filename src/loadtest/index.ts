export { runLoadtest, type LoadtestSummary, type LoadtestProgress, type LoadtestHooks } from './run-loadtest.js'
export { parseLoadtestArgs, LOADTEST_USAGE, type LoadtestOptions } from './options.js'
export { loadtestCommand } from './cli.js'
