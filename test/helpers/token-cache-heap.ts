import { getHeapSnapshot } from 'node:v8'
import { createTokenVerifier } from '../../src/auth/token-verifier.js'
import { silentLogger } from './token-app.js'
import { snapshotOf, testConfig } from './token-config.js'
import { generateTestKey, keyStoreOf, mint, serviceClaims } from './token-mint.js'

/**
 * Run as its own process by test/unit/token-cache-memory.test.ts: caches `argv[2]` verified tokens, takes a heap
 * snapshot and prints what it found as JSON. Its own process because a snapshot of a tap test process (which holds
 * the TypeScript compiler) takes ~25 s instead of ~0.6 s.
 */

/** The parts of a V8 heap snapshot this reads. */
interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[], node_types: [string[]], edge_fields: string[], edge_types: [string[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

async function takeHeapSnapshot (): Promise<HeapSnapshot> {
  const chunks: Buffer[] = []
  for await (const chunk of getHeapSnapshot()) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as HeapSnapshot
}

/** How many objects have all of `properties`, and how many distinct hidden classes (maps) they have among them. */
function objectsWith (heap: HeapSnapshot, properties: readonly string[]): { objects: number, maps: number } {
  const { meta } = heap.snapshot
  const nodeWidth = meta.node_fields.length
  const edgeWidth = meta.edge_fields.length
  const edgeCountAt = meta.node_fields.indexOf('edge_count')
  const property = meta.edge_types[0].indexOf('property')
  const internal = meta.edge_types[0].indexOf('internal')
  const object = meta.node_types[0].indexOf('object')
  // Edge names are indexes into `strings`; a name may appear there more than once.
  const wanted = new Map<number, number>()
  const mapName = new Set<number>()
  heap.strings.forEach((text, index) => {
    const at = properties.indexOf(text)
    if (at !== -1) wanted.set(index, at)
    if (text === 'map') mapName.add(index)
  })
  let objects = 0
  const maps = new Set<number>()
  let edge = 0
  for (let node = 0; node < heap.nodes.length; node += nodeWidth) {
    const end = edge + (heap.nodes[node + edgeCountAt] as number) * edgeWidth
    if (heap.nodes[node] === object) {
      let found = 0
      let map: number | undefined
      for (let e = edge; e < end; e += edgeWidth) {
        const name = heap.edges[e + 1] as number
        if (heap.edges[e] === property && wanted.has(name)) found |= 1 << (wanted.get(name) as number)
        else if (heap.edges[e] === internal && mapName.has(name)) map = heap.edges[e + 2]
      }
      if (found === (1 << properties.length) - 1) {
        objects++
        if (map !== undefined) maps.add(map)
      }
    }
    edge = end
  }
  return { objects, maps: maps.size }
}

const tokens = Number(process.argv[2] ?? 500)
const key = await generateTestKey('k1')
const config = testConfig({ keys: [] })
const snapshot = snapshotOf(config)
const verifier = createTokenVerifier({ keys: keyStoreOf(key), logger: silentLogger })
const minted: string[] = []
for (let i = 0; i < tokens; i++) minted.push(await mint(key, serviceClaims()))
for (const token of minted) await verifier.verify(token, config, snapshot.indexes)
const heap = await takeHeapSnapshot()
const entries = objectsWith(heap, ['principal', 'fingerprint', 'signedBy'])
const signers = objectsWith(heap, ['kid', 'key'])
// Every token is cached: a second pass is answered without a promise. (This also keeps the verifier alive until
// after the snapshot, which collects garbage first.)
const allCached = !minted.some((token) => verifier.verifyFast(token, config, snapshot.indexes) instanceof Promise)
process.stdout.write(JSON.stringify({ tokens, entries, signers, allCached }))
