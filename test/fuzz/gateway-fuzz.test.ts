import t from 'tap'
import { FUZZ_CLASSES, runGatewayFuzz } from './gateway-properties.js'

/**
 * The fuzz properties of gateway-properties.ts with a fixed seed and few runs, so `npm test` stays fast and
 * repeatable; `npm run fuzz` runs the same properties with many more (docs/reliability.md has its figures).
 */
const SEED = 20261123

t.test('fuzz (seeded, bounded): token forms, bearer tokens, lane paths, payment bodies → no 5xx, no crash, envelopes kept', async (t) => {
  const figures = await runGatewayFuzz({ seed: SEED, runs: { token_form: 100, bearer_token: 300, lane_path: 300, payment_body: 300 } })
  for (const cls of FUZZ_CLASSES) {
    const f = figures.classes[cls]
    t.equal(f.counterexample, undefined, `${cls}: no counterexample`)
    t.equal(f.server_errors, 0, `${cls}: no 5xx made by the gateway`)
    t.equal(f.envelope_violations, 0, `${cls}: every answer in its envelope`)
    t.ok(f.cases >= 20, `${cls}: ${f.cases} cases sent (${f.unsendable} not sendable)`)
  }
  t.equal(figures.error_log_lines, 0, 'nothing logged at error level')
  t.equal(figures.alive, true, 'the gateway still answers /healthz')
})
