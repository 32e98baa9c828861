import t from 'tap'
import { SCENARIO_IDS, parseBenchArgs, peerWanted } from '../../bench/options.js'
import { RESULTS_DIR } from '../../bench/paths.js'

t.test('defaults: every scenario, 5 rounds of 5 s, 1M requests and 100k tokens for memory, pinned, with peers', async (t) => {
  t.same(parseBenchArgs([]), {
    scenarios: [...SCENARIO_IDS],
    durationSeconds: 5,
    latencySamples: 20_000,
    warmupSeconds: 2,
    rounds: 5,
    connections: 50,
    memoryRequests: 1_000_000,
    memoryTokens: 100_000,
    soakMinutes: 0,
    soakSampleSeconds: 30,
    outDir: RESULTS_DIR,
    pin: true,
    peers: true,
    profile: false,
    quick: false,
    console: false,
    telemetry: false,
    instructions: false,
    instructionWarmup: 10_000,
    instructionRequests: 1000,
  })
})

t.test('--console adds the console-open variants (off by default)', async (t) => {
  t.equal(parseBenchArgs([]).console, false)
  t.equal(parseBenchArgs(['--console']).console, true)
})

t.test('--telemetry adds the trace and access-log variants (off by default), timed or counted in instructions', async (t) => {
  t.equal(parseBenchArgs([]).telemetry, false)
  t.equal(parseBenchArgs(['--telemetry']).telemetry, true)
  t.equal(parseBenchArgs(['--telemetry', '--instructions']).telemetry, true)
})

t.test('--quick shortens everything; explicit options still win', async (t) => {
  const quick = parseBenchArgs(['--quick', '--rounds', '2'])
  t.same({ d: quick.durationSeconds, w: quick.warmupSeconds, r: quick.rounds, mr: quick.memoryRequests, mt: quick.memoryTokens, q: quick.quick },
    { d: 2, w: 1, r: 2, mr: 50_000, mt: 5_000, q: true })
})

t.test('--latency-samples sets the latency rounds\' size: 20,000 by default (p99.9 on 20), 10,000 with --quick', async (t) => {
  t.equal(parseBenchArgs([]).latencySamples, 20_000)
  t.equal(parseBenchArgs(['--quick']).latencySamples, 10_000)
  t.equal(parseBenchArgs(['--quick', '--latency-samples', '500']).latencySamples, 500)
  t.throws(() => parseBenchArgs(['--latency-samples', '2.5']), /--latency-samples must be a positive integer/)
  t.throws(() => parseBenchArgs(['--latency-samples', '0']), /--latency-samples must be a positive integer/)
})

t.test('--scenario takes a comma list or repeats, keeps the canonical order, and rejects unknown ids', async (t) => {
  t.same(parseBenchArgs(['--scenario', 'token,auth-get']).scenarios, ['auth-get', 'token'])
  t.same(parseBenchArgs(['--scenario', 'memory', '--scenario', 'live-proxy']).scenarios, ['live-proxy', 'memory'])
  t.throws(() => parseBenchArgs(['--scenario', 'nope']), /unknown scenario "nope"/)
})

t.test('numbers are checked; fractional durations and --warmup 0 are allowed', async (t) => {
  const o = parseBenchArgs(['--duration', '0.5', '--warmup', '0', '--no-pin', '--no-peers', '--out', '/tmp/x'])
  t.same({ d: o.durationSeconds, w: o.warmupSeconds, pin: o.pin, peers: o.peers, out: o.outDir }, { d: 0.5, w: 0, pin: false, peers: false, out: '/tmp/x' })
  t.throws(() => parseBenchArgs(['--rounds', '1.5']), /--rounds must be a positive integer/)
  t.throws(() => parseBenchArgs(['--connections=0']), /--connections must be a positive integer/)
  t.throws(() => parseBenchArgs(['--bogus']), /bogus/)
})

t.test('--soak-minutes adds a soak to the memory scenario; 0 means none', async (t) => {
  t.equal(parseBenchArgs(['--soak-minutes', '10']).soakMinutes, 10)
  t.equal(parseBenchArgs(['--soak-minutes', '0']).soakMinutes, 0)
  t.throws(() => parseBenchArgs(['--soak-minutes=ten']), /--soak-minutes must be a positive number/)
})

t.test('--peers names the peers to run; an unknown one, or with --no-peers, is refused', async (t) => {
  const o = parseBenchArgs(['--peers', 'nginx, undici-floor'])
  t.same(o.onlyPeers, ['nginx', 'undici-floor'])
  t.equal(peerWanted(o, 'nginx'), true)
  t.equal(peerWanted(o, 'fast-gateway'), false)
  t.equal(peerWanted(parseBenchArgs([]), 'fast-gateway'), true, 'no --peers: every peer')
  t.equal(peerWanted(parseBenchArgs(['--no-peers']), 'nginx'), false)
  t.throws(() => parseBenchArgs(['--peers', 'nginx,kong']), /unknown peer "kong"/)
  t.throws(() => parseBenchArgs(['--peers', 'nginx', '--no-peers']), /contradict/)
})

t.test('--signing-alg names the key type of the bench\'s gateways (unset by default); an unknown one is refused', async (t) => {
  t.equal(parseBenchArgs([]).signingAlg, undefined)
  t.equal(parseBenchArgs(['--signing-alg', 'ES256']).signingAlg, 'ES256')
  t.throws(() => parseBenchArgs(['--signing-alg', 'HS256']), { message: 'unknown --signing-alg "HS256" (known: EdDSA, ES256, RS256)' })
})
