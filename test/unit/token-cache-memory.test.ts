import t from 'tap'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

// The verifier caches up to 100k verifications, so their size is most of the gateway's memory under many clients
// (issue 6: RSS ≤ 200 MB after 1M requests over 100k tokens). A heap snapshot of that run found every cached entry
// with a hidden class of its own (built with an object spread): a Map, a DescriptorArray and a PropertyArray per
// token, ≈ 24 MB over 100k tokens. Heap byte counts proved too noisy to test this; a heap snapshot's graph is exact.

const heapProbe = fileURLToPath(new URL('../helpers/token-cache-heap.js', import.meta.url))

t.test('cached verifications share one hidden class instead of one each, and one signer object per key', async (t) => {
  const tokens = 500
  const { stdout } = await promisify(execFile)(process.execPath, [heapProbe, String(tokens)])
  const found = JSON.parse(stdout) as { entries: { objects: number, maps: number }, signers: { objects: number }, allCached: boolean }
  t.equal(found.allCached, true, 'every token is cached')
  t.ok(found.entries.objects >= tokens, `${found.entries.objects} cache entries in the heap`)
  // Two, not one: a verification's return value ({principal, fingerprint, signedBy}, the entry without its time)
  // has the same properties and a class of its own; a class per entry would give about as many as tokens.
  t.ok(found.entries.maps <= 2, `${found.entries.maps} hidden classes among them`)
  t.ok(found.signers.objects < 10, `${found.signers.objects} signedBy objects`)
})
