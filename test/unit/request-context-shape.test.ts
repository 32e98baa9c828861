import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnPlainNode } from '../helpers/plain-node.js'

/**
 * `request.gw` keeps one hidden class across requests and routes (src/runtime/request-context.ts). It was an object
 * literal that V8 kept outside its transition tree in the gateway, so `setPrincipal` and `organization` built two new
 * hidden classes per request, and the scavenges promoted their descriptor arrays (docs/performance.md, "Issue 24,
 * the tenth session"). The fixture boots the demo gateway in a fresh `node --allow-natives-syntax` and compares
 * consecutive requests' `request.gw` with `%HaveSameMap`: the build before the fix printed 0 same and 401 different.
 */
const FIXTURE = repoPath('test/fixtures/v8/request-shape.mjs')

t.test('request.gw has the same hidden class on every request, through auth, organization and the token endpoint', async (t) => {
  const child = spawnPlainNode(['--allow-natives-syntax', FIXTURE, repoPath('dist')], {}, ['ignore', 'pipe', 'pipe'])
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  t.equal(code, 0, stderr)
  // Two token requests and 400 GETs: 402 handlers started, 401 consecutive pairs compared.
  t.same(JSON.parse(stdout), { same: 401, different: 0, statuses: { 200: 400 } })
})
