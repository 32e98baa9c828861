import { serialize } from 'node:v8'
import t from 'tap'
import { parse } from 'yaml'
import { SINGLE_TARGET_DEFAULTS } from '../../src/upstream/settings.js'
import { Upstream } from '../../src/upstream/upstream.js'

/** How V8 stores a string, read off its serialization tag: `"` one byte per character, `c` two. */
function storage (text: string): string {
  const tag = serialize(text)[2]
  return tag === 0x22 ? 'one byte' : tag === 0x63 ? 'two bytes' : `tag ${tag}`
}

/** A value as the config loader gets it: parsed from a text that holds a wider character somewhere (a comment). */
const fromConfig = (parse('# lanegate \u2014 demo\ncredential: Lane demo-lane-001-credential\n') as { credential: string }).credential

t.test('a credential read from a config with wider characters is sent stored one byte per character', async (t) => {
  const upstream = new Upstream({ targets: [{ url: 'http://127.0.0.1:1', weight: 1 }], ...SINGLE_TARGET_DEFAULTS, max_sockets: 1, timeouts: { connect_ms: 1000, response_ms: 1000, body_idle_ms: 1000 }, label: 'x', credential: fromConfig })
  t.teardown(() => upstream.close())
  t.same([storage(fromConfig), upstream.credential, storage(upstream.credential as string)], ['two bytes', 'Lane demo-lane-001-credential', 'one byte'])
})
