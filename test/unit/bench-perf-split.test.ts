import t from 'tap'
import { categoryOf, splitReport, splitTable } from '../../bench/perf-split.js'

t.test('perf symbols fall into the categories the split reports', async (t) => {
  t.equal(categoryOf('[kernel.kallsyms]', 'tcp_sendmsg'), 'kernel')
  t.equal(categoryOf('libc.so.6', '_int_malloc'), 'libc (malloc, memcpy)')
  t.equal(categoryOf('JIT', 'JS:*relayLive file:///w/dist/src/services/live/index.js:52:36'), 'lanegate JS')
  t.equal(categoryOf('JIT', 'JS:*authStep file:///w/dist/plugins/auth/index.js:40:33'), 'lanegate JS')
  t.equal(categoryOf('JIT', 'JS:*routeHandler /w/node_modules/fastify/lib/route.js:465:25'), 'fastify JS')
  t.equal(categoryOf('JIT', 'JS:*find /w/node_modules/find-my-way/index.js:618:39'), 'fastify JS')
  t.equal(categoryOf('JIT', 'JS:*writeH1 /w/node_modules/undici/lib/dispatcher/client-h1.js:1144:18'), 'undici JS')
  t.equal(categoryOf('JIT', 'JS:wasm-function[20]-20-turbofan'), 'undici llhttp (wasm)')
  t.equal(categoryOf('JIT', 'JS:*clearBuffer node:internal/streams/writable:744:21'), 'node JS (http, streams, net, timers)')
  t.equal(categoryOf('JIT', 'RegExp:[^\\t\\x20-\\x7e\\x80-\\xff]'), 'regexps')
  t.equal(categoryOf('node', 'v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>'), 'V8 GC')
  t.equal(categoryOf('node', 'v8::internal::ConcurrentMarking::RunMajor'), 'V8 GC')
  t.equal(categoryOf('node', 'v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)'), 'V8 GC')
  t.equal(categoryOf('node', 'v8::internal::Factory::NewHeapNumber'), 'V8 runtime', 'allocating is not collecting')
  t.equal(categoryOf('node', 'v8::internal::HeapObject::SizeFromMap'), 'V8 runtime')
  t.equal(categoryOf('node', 'v8::internal::compiler::GraphReducer::ReduceTop'), 'V8 optimizing compiler')
  t.equal(categoryOf('node', 'Builtins_KeyedLoadIC_Megamorphic'), 'V8 builtins (ICs, calls, strings)')
  t.equal(categoryOf('node', 'llhttp__internal_execute'), 'node http parser (C)')
  t.equal(categoryOf('node', 'CRYPTO_memcmp'), 'OpenSSL')
  t.equal(categoryOf('node', 'node::StreamBase::Writev'), 'node C++ / libuv')
  t.equal(categoryOf('node', 'v8::String::WriteUtf8'), 'V8 runtime')
})

t.test('a perf report becomes µs per request by category, and two of them a table of differences', async (t) => {
  const report = [
    '    50.00%  [kernel.kallsyms]  [k] tcp_sendmsg',
    '    25.00%  [JIT] tid 4242     [.] JS:*relayLive file:///w/dist/src/services/live/index.js:52:36',
    '    25.00%  node               [.] Builtins_LoadIC',
    '',
    '# a comment line',
  ].join('\n')
  const lanegate = splitReport(report, 40)
  t.same([...lanegate], [['kernel', 20], ['lanegate JS', 10], ['V8 builtins (ICs, calls, strings)', 10]])
  const floor = splitReport('   100.00%  [kernel.kallsyms]  [k] tcp_sendmsg', 16)
  t.equal(splitTable(floor, lanegate, ['floor', 'lanegate']), [
    '| where | floor µs | lanegate µs | difference |',
    '|---|---|---|---|',
    '| lanegate JS | 0.0 | 10.0 | +10.0 |',
    '| V8 builtins (ICs, calls, strings) | 0.0 | 10.0 | +10.0 |',
    '| kernel | 16.0 | 20.0 | +4.0 |',
    '| total | 16.0 | 40.0 | +24.0 |',
  ].join('\n'))
})
