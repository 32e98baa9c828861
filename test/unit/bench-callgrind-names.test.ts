import t from 'tap'
import { byFunction, nameAt, parseAnnotate, parsePerfMap, perfMapOf } from '../../bench/callgrind-names.js'

const map = [
  '1000 100 JS:~handler file:///w/dist/src/a.js:1:1',
  '2000 80 JS:*old file:///w/dist/src/b.js:2:2',
  '1100 20 Builtins_Something',
  // V8 reused the code space of `old`: the later line is the code there now.
  '2000 40 JS:*current file:///w/dist/src/c.js:3:3',
  'not a map line',
].join('\n')

t.test('an address is named by the entry covering it that was written last', async (t) => {
  const entries = parsePerfMap(map)
  t.equal(entries.length, 4)
  t.equal(nameAt(entries, 0x1000), 'JS:~handler file:///w/dist/src/a.js:1:1')
  t.equal(nameAt(entries, 0x1080), 'JS:~handler file:///w/dist/src/a.js:1:1', 'inside its range, after a later start')
  t.equal(nameAt(entries, 0x1105), 'Builtins_Something')
  t.equal(nameAt(entries, 0x2010), 'JS:*current file:///w/dist/src/c.js:3:3', 'the reused range')
  t.equal(nameAt(entries, 0x2045), 'JS:*old file:///w/dist/src/b.js:2:2', 'past the new entry, still in the old one')
  t.equal(nameAt(entries, 0x2080), undefined, 'just past every range')
  t.equal(nameAt(entries, 0x10), undefined, 'before every range')
})

t.test('callgrind_annotate rows become instructions per request by function, JIT code named', async (t) => {
  const annotate = [
    '3,000,000 (100.0%)  PROGRAM TOTALS',
    '1,000,000 (33.33%)  ???:0x0000000000001010 [???]',
    '  600,000 (20.00%)  ???:0x0000000000001090 [???]',
    '  400,000 (13.33%)  ???:Builtins_KeyedLoadIC_Megamorphic [/usr/bin/node]',
    '  200,000 ( 6.67%)  ???:0x0000000000009999 [???]',
  ].join('\n')
  const rows = parseAnnotate(annotate)
  t.same(rows.map(([fn]) => fn), ['???:0x0000000000001010', '???:0x0000000000001090', '???:Builtins_KeyedLoadIC_Megamorphic', '???:0x0000000000009999'])
  t.same(byFunction(rows, parsePerfMap(map), 1000), [
    ['JIT JS:~handler file:///w/dist/src/a.js:1:1', 1600],
    ['Builtins_KeyedLoadIC_Megamorphic', 400],
    ['JIT unnamed', 200],
  ])
})

t.test('the map of a dump: the one the bench kept beside it, else node\'s of the pid callgrind wrote in it', async (t) => {
  const header = 'version: 1\ncreator: callgrind-3.19.0\npid: 18734\ncmd: node x.js\n'
  const kept = (path: string): boolean => path === '/run/callgrind/auth-get/gateway-main.callgrind.perf.map'
  t.equal(perfMapOf('/run/callgrind/auth-get/gateway-main.callgrind.2', header, kept), '/run/callgrind/auth-get/gateway-main.callgrind.perf.map')
  t.equal(perfMapOf('/run/callgrind/auth-get/lane.callgrind.1', header, kept), '/tmp/perf-18734.map')
  t.throws(() => perfMapOf('/elsewhere/dump.1', 'version: 1\n', kept), /no pid/)
})
