import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnPlainNode } from '../helpers/plain-node.js'

/**
 * holdTickObjectShape (src/node-tuning/tick-object-shape.ts) keeps process.nextTick's tick object literal monomorphic
 * across a full GC that finds no tick object alive. Each case is a fresh node (V8's feedback is per process) running
 * test/fixtures/v8/tick-feedback.cjs, which prints nextTick's feedback after such a GC. A plain node (plain-node.ts):
 * with this runner's exit hooks in the child, V8's print, held in C's stdio buffer until exit, was lost.
 */
const FIXTURE = repoPath('test/fixtures/v8/tick-feedback.cjs')
const HOLDER = repoPath('dist/src/node-tuning/tick-object-shape.js')

/** The states V8 printed for the tick object literal's keys, in slot order. */
async function literalKeyStates (args: string[]): Promise<string[]> {
  const child = spawnPlainNode(['--expose-gc', '--allow-natives-syntax', FIXTURE, ...args], {}, ['ignore', 'pipe', 'pipe'])
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  if (code !== 0) throw new Error(`the fixture exited ${code}: ${stderr}`)
  return [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] as string)
}

t.test('without the hold, the GC leaves the literal\'s keys megamorphic (the slow state the hold prevents)', async (t) => {
  const states = await literalKeyStates([])
  t.equal(states.length, 4, `four keys in node's tick object literal (${states.join(', ')})`)
  t.ok(states.includes('MEGAMORPHIC'), `some key went megamorphic (${states.join(', ')})`)
})

t.test('with the hold, every key of the literal stays monomorphic', async (t) => {
  const states = await literalKeyStates([HOLDER])
  t.same(states, ['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC'])
})
