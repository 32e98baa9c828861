import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'

/**
 * `request.gw` keeps one hidden class across requests and routes (src/runtime/request-context.ts). It was an object
 * literal that V8 kept outside its transition tree in the gateway, so `setPrincipal` and `organization` built two new
 * hidden classes per request, and the scavenges promoted their descriptor arrays (docs/performance.md, "Issue 24,
 * the tenth session"). The fixture boots the demo gateway in a node of its own (V8's feedback and hidden classes are
 * per process) and compares consecutive requests' `request.gw` with `%HaveSameMap`: the build before the fix printed
 * 1 same and 400 different.
 */
const FIXTURE = repoPath('test/fixtures/v8/request-shape.mjs')

t.test('request.gw has the same hidden class on every request, through auth, organization and the token endpoint', async (t) => {
  const run = await runNode(FIXTURE, [repoPath('dist')])
  t.equal(run.code, 0, run.stderr)
  // Two token requests and 400 GETs: 402 handlers started, 401 consecutive pairs compared.
  t.same(JSON.parse(run.stdout), { same: 401, different: 0, statuses: { 200: 400 } })
})
