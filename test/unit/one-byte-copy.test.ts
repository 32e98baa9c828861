import { spawnSync } from 'node:child_process'
import t from 'tap'
import { oneByteCopy } from '../../src/node-tuning/one-byte-copy.js'

const moduleUrl = new URL('../../src/node-tuning/one-byte-copy.js', import.meta.url).href

/** V8's own word for how it stores the string each line of `script` prints (%DebugPrint), in a node that allows it. */
function storedAs (script: string): string[] {
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(run.stderr)
  return [...run.stdout.matchAll(/- type: ([A-Z_]+)/g)].map((m) => m[1] as string)
}

t.test('a string sliced from a two-byte text is copied one byte per character', async (t) => {
  const types = storedAs(`
    import { oneByteCopy } from ${JSON.stringify(moduleUrl)};
    const text = 'scope: engage:content.view — a comment';
    const slice = JSON.stringify(text.slice(7, 26));
    %DebugPrint(slice);
    %DebugPrint(oneByteCopy(slice));
  `)
  t.same(types, ['STRING_TYPE', 'ONE_BYTE_STRING_TYPE'], 'two bytes per character before, one after')
})

t.test('the copy is the same string, whatever it holds', async (t) => {
  for (const text of ['', 'engage:content.view', '"a b"', 'ünï €', '\ud800 lone', '😀']) t.equal(oneByteCopy(text), text)
})
