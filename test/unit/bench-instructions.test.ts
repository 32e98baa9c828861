import { readFile } from 'node:fs/promises'
import t from 'tap'
import { callgrindArgs, parseCallgrindTotals } from '../../bench/callgrind.js'
import { batchDrift, instructionComparisons, instructionRatio, instructionsPerRequest, instructionVariant, netOfIdle } from '../../bench/instruction-figures.js'
import { INSTRUCTION_REQUESTS, INSTRUCTION_WARMUP, parseBenchArgs } from '../../bench/options.js'
import { markdownReport } from '../../bench/report.js'
import type { BenchResult, InstructionVariant } from '../../bench/result-types.js'
import { repoPath } from '../helpers/paths.js'

t.test('the Ir of a callgrind dump is its totals line, not its summary line (wrapped around after -i off / -i on)', async (t) => {
  // A real second dump of a server (trimmed): its summary is 2^64 minus something, its totals the right count.
  const text = await readFile(repoPath('test/fixtures/callgrind/second-dump.callgrind'), 'utf8')
  t.match(text, /^summary: 18446744073668363050$/m)
  t.equal(parseCallgrindTotals(text), 321_817_990)
})

t.test('totals are read in the order of the events line; a missing trailing value is zero', async (t) => {
  t.equal(parseCallgrindTotals('events: Ir Dr Dw\nfn=(1) x\n0 5 6 7\ntotals: 123 456 789\n'), 123)
  t.equal(parseCallgrindTotals('events: Dr Ir\ntotals: 456 123\n'), 123)
  t.equal(parseCallgrindTotals('events: Dr Ir\ntotals: 456\n'), 0)
  t.equal(parseCallgrindTotals('events: Ir\ntotals: 0\n'), 0)
})

t.test('a file that is not a whole callgrind dump is refused, not read as zero', async (t) => {
  t.throws(() => parseCallgrindTotals('totals: 5\n'), /no "events:" line/)
  t.throws(() => parseCallgrindTotals('events: Ir\nfn=(1) x\n0 5\n'), /no "totals:" line/)
  t.throws(() => parseCallgrindTotals('events: Dr\ntotals: 5\n'), /counts no Ir/)
  t.throws(() => parseCallgrindTotals('events: Ir\ntotals: 12x\n'), /"12x" is not a count/)
})

t.test('valgrind runs callgrind with self-modifying code checked and instrumentation off at start', async (t) => {
  t.same(callgrindArgs('/tmp/x/gateway-main.callgrind'), ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', '--callgrind-out-file=/tmp/x/gateway-main.callgrind'])
})

t.test('instructions per request: all batches\' instructions over all their requests', async (t) => {
  const batches = [{ requests: 300, instructions: 60_000_000, upstreamInstructions: 15_000_000 }, { requests: 100, instructions: 22_000_000, upstreamInstructions: 5_000_000 }]
  t.equal(instructionsPerRequest(batches), 205_000)
  t.equal(instructionsPerRequest(batches, 'upstream'), 50_000)
  t.throws(() => instructionsPerRequest([]), /no requests/)
})

t.test('a ratio by instructions is reference ÷ subject: the throughput share of a CPU-bound server', async (t) => {
  t.equal(instructionRatio(60_000, 240_000), 0.25)
  t.equal(instructionRatio(100_000, 80_000), 1.25)
  t.throws(() => instructionRatio(60_000, 0), /must be positive/)
})

t.test('batch drift is the last batch per request ÷ the first, minus one', async (t) => {
  t.equal(batchDrift([{ requests: 100, instructions: 10_000_000 }, { requests: 100, instructions: 11_000_000 }]), 0.10000000000000009)
  t.equal(batchDrift([{ requests: 100, instructions: 10_000_000 }]), 0)
})

t.test('a variant carries its ratio to the baseline, and the upstream only when every batch counted it', async (t) => {
  const v = instructionVariant('gw', 'subject', [{ requests: 10, instructions: 2_000_000 }, { requests: 10, instructions: 2_000_000 }], 50_000)
  t.same(v, { name: 'gw', role: 'subject', batches: v.batches, perRequest: 200_000, batchDrift: 0, ratio: 0.25 })
  const relay = instructionVariant('live', 'subject', [{ requests: 10, instructions: 1_000_000, upstreamInstructions: 300_000 }, { requests: 10, instructions: 1_000_000 }])
  t.equal(relay.upstreamPerRequest, undefined)
  t.equal(relay.ratio, undefined)
})

function counted (name: string, perRequest: number): InstructionVariant {
  return instructionVariant(name, 'peer', [{ requests: 100, instructions: perRequest * 100 }, { requests: 100, instructions: perRequest * 100 }])
}

t.test('the comparisons issue 24 asks for are taken when both variants were counted, --compare against ours', async (t) => {
  const authGet = [counted('fastify-hello', 50_000), counted('lanegate-auth-get', 100_000), counted('fastify-same-response', 80_000), counted('lanegate-auth-get-metrics-off', 95_000), counted('lanegate-auth-get@compare', 120_000)]
  t.same(instructionComparisons('auth-get', authGet).map((c) => [c.subject, c.reference, c.ratio]), [
    ['lanegate-auth-get', 'fastify-same-response', 0.8],
    ['lanegate-auth-get', 'lanegate-auth-get-metrics-off', 0.95],
    ['lanegate-auth-get', 'lanegate-auth-get@compare', 1.2],
  ])
  // With the same answer from fastify with a logger and request ids: lanegate's own share, and fastify's for them.
  const split = instructionComparisons('auth-get', [...authGet, counted('fastify-same-response-as-gateway', 88_000)])
  t.same(split.map((c) => [c.subject, c.reference, c.ratio]).slice(0, 3), [
    ['lanegate-auth-get', 'fastify-same-response', 0.8],
    ['lanegate-auth-get', 'fastify-same-response-as-gateway', 0.88],
    ['fastify-same-response-as-gateway', 'fastify-same-response', 0.9090909090909091],
  ])
  // nginx was not counted (no peers): no relay-vs-nginx line, the metrics one stays.
  const live = [counted('lane-direct', 40_000), counted('lanegate-live', 200_000), counted('lanegate-live-metrics-off', 190_000)]
  t.same(instructionComparisons('live-proxy', live).map((c) => c.reference), ['lanegate-live-metrics-off'])
  t.same(instructionComparisons('live-proxy', [...live, counted('nginx', 20_000)]).map((c) => [c.reference, c.ratio]), [['lanegate-live-metrics-off', 0.95], ['nginx', 0.1]])
})

t.test('--instructions: auth-get and live-proxy by default, warm-up and batch sizes settable only with it', async (t) => {
  const o = parseBenchArgs(['--instructions'])
  t.same({ i: o.instructions, s: o.scenarios, w: o.instructionWarmup, m: o.instructionRequests }, { i: true, s: ['auth-get', 'live-proxy'], w: INSTRUCTION_WARMUP, m: INSTRUCTION_REQUESTS })
  const small = parseBenchArgs(['--instructions', '--scenario', 'cache,auth-get', '--instr-warmup', '20', '--instr-requests', '5'])
  t.same({ s: small.scenarios, w: small.instructionWarmup, m: small.instructionRequests }, { s: ['auth-get', 'cache'], w: 20, m: 5 })
  t.equal(parseBenchArgs([]).instructions, false)
  t.throws(() => parseBenchArgs(['--instr-requests', '5']), /go with --instructions/)
  t.throws(() => parseBenchArgs(['--instructions', '--instr-warmup', '0']), /--instr-warmup must be a positive integer/)
  t.throws(() => parseBenchArgs(['--instructions', '--scenario', 'workers']), /cannot count scenario "workers": its gateways fork workers/)
  t.throws(() => parseBenchArgs(['--instructions', '--scenario', 'memory']), /cannot count scenario "memory"/)
  t.throws(() => parseBenchArgs(['--instructions', '--console']), /--console does not go with --instructions/)
  t.throws(() => parseBenchArgs(['--instructions', '--profile']), /--profile does not go with --instructions/)
})

t.test('the report shows instructions per request, both batches, ratios and comparisons, and no throughput table', async (t) => {
  const hello = instructionVariant('fastify-hello', 'baseline', [{ requests: 100, instructions: 5_700_000 }, { requests: 100, instructions: 5_720_000 }])
  const gw = instructionVariant('lanegate-auth-get', 'subject', [{ requests: 100, instructions: 20_000_000 }, { requests: 100, instructions: 20_000_000 }], hello.perRequest)
  const result: BenchResult = {
    harness: 'lanegate-bench',
    schemaVersion: 1,
    startedAt: '2026-11-26T09:00:00.000Z',
    finishedAt: '2026-11-26T09:05:00.000Z',
    machine: { cpus: 2, cpuModel: 'x', node: 'v20', platform: 'linux x64', pinned: true, serverCore: 0, loadgenCore: 1 },
    options: { instructions: true },
    scenarios: [{ id: 'auth-get', title: 'auth-get', kind: 'instructions', baseline: 'fastify-hello', connections: 1, variants: [], runs: [], skipped: [], instructions: { warmupRequests: 10_000, batchRequests: 100, variants: [hello, gw], comparisons: [] } }],
    targets: [],
    failures: [],
    warnings: [],
  }
  const markdown = markdownReport(result)
  t.match(markdown, 'after 10000 warm-up requests per variant; two batches of 100 sequential requests')
  t.match(markdown, '| fastify-hello | baseline | 57.1k | 57.0k | 57.2k | 1.0035 | 1 | – | – | – |')
  t.match(markdown, '| lanegate-auth-get | subject | 200.0k | 200.0k | 200.0k | 1 | 0.285 | – | – | – |')
  t.notMatch(markdown, '| req/s |')
})

t.test('net of idle: the idle rate over the batches\' wall time comes off each request, and the comparison gets a net ratio', async (t) => {
  // 2 × 1,000 requests in 10 s each; idle, the server does 1M instructions a second: 10M over each batch, 10k a request.
  const batches = [{ requests: 1000, instructions: 300_000_000, seconds: 10 }, { requests: 1000, instructions: 300_000_000, seconds: 10 }]
  t.equal(netOfIdle(batches, 1_000_000), 290_000)
  t.equal(netOfIdle(batches, undefined), undefined, 'no idle rate: no net figure')
  t.equal(netOfIdle([{ requests: 1000, instructions: 300_000_000 }], 1_000_000), undefined, 'a batch without its time: no net figure')
  const on = instructionVariant('lanegate-live', 'subject', batches, undefined, 1_000_000)
  const off = instructionVariant('lanegate-live-metrics-off', 'peer', [{ requests: 1000, instructions: 280_000_000, seconds: 10 }, { requests: 1000, instructions: 280_000_000, seconds: 10 }], undefined, 0)
  t.same([on.idlePerSecond, on.netPerRequest, off.netPerRequest], [1_000_000, 290_000, 280_000])
  const [metrics] = instructionComparisons('live-proxy', [on, off])
  t.equal(metrics?.ratio, 280_000 / 300_000)
  t.equal(metrics?.netRatio, 280_000 / 290_000)
  const plain = instructionComparisons('live-proxy', [instructionVariant('lanegate-live', 'subject', batches), off])
  t.equal(plain[0]?.netRatio, undefined, 'one side without an idle rate: no net ratio')
})
