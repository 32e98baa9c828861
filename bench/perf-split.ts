import { execFileSync } from 'node:child_process'
import { parseArgs } from 'node:util'

/**
 * Where a server's CPU per request goes, by category, from `perf record -e cpu-clock -g -p <pid>` of a server
 * started with `node --perf-basic-prof` (so JIT code has names). Two recordings side by side (say lanegate's live
 * relay and the undici floor, or auth-get and fastify sending the same answer) give the difference by category:
 * the kernel, V8's builtins and runtime, its GC, Node's own JS, fastify, undici and lanegate.
 *
 * Unlike `--profile` (V8's sampler, wall-clock samples: a thread preempted inside a write(2) on the shared core
 * is billed for the lane's time), cpu-clock samples only on-CPU time, kernel included.
 *
 * Usage: node dist/bench/perf-split.js --a floor.perf.data --a-us 36 --a-name floor --b gw.perf.data --b-us 46 --b-name lanegate
 * (`--a-us`/`--b-us`: each server's measured CPU per request, by which the shares are scaled.)
 */

/** The category of one `perf report --sort dso,sym` line (`dso` as perf prints it, `[JIT] tid N` already `JIT`). */
export function categoryOf (dso: string, symbol: string): string {
  if (dso.includes('kernel')) return 'kernel'
  if (dso.startsWith('libc')) return 'libc (malloc, memcpy)'
  if (dso === 'JIT') {
    if (symbol.includes('/dist/src/') || symbol.includes('/dist/plugins/')) return 'lanegate JS'
    if (/node_modules\/(fastify|find-my-way|avvio|@fastify)\//.test(symbol)) return 'fastify JS'
    if (symbol.includes('node_modules/undici/')) return 'undici JS'
    if (symbol.includes('node_modules/')) return 'other npm JS'
    if (symbol.includes('wasm')) return 'undici llhttp (wasm)'
    if (symbol.includes('node:')) return 'node JS (http, streams, net, timers)'
    if (symbol.startsWith('RegExp')) return 'regexps'
    return 'JIT other'
  }
  if (dso === 'node') {
    // The collector's own classes and entry points, not every symbol naming the heap (allocation is not GC).
    if (/Scaveng|MarkCompact|Marking|Sweeper|Evacuat|Compactor|MinorMC|GCTracer|Heap::CollectGarbage|Heap::PerformGarbageCollection/.test(symbol)) return 'V8 GC'
    if (symbol.startsWith('v8::internal::compiler::') || symbol.startsWith('v8::internal::maglev::')) return 'V8 optimizing compiler'
    if (symbol.startsWith('Builtins_')) return 'V8 builtins (ICs, calls, strings)'
    if (symbol.startsWith('llhttp') || symbol.includes('Parser')) return 'node http parser (C)'
    if (/^(CRYPTO|OPENSSL|EVP_|SHA|ossl|BN_|ED25519|x25519|X25519)/i.test(symbol)) return 'OpenSSL'
    if (symbol.startsWith('node::') || symbol.startsWith('uv_') || symbol.startsWith('uv__')) return 'node C++ / libuv'
    if (symbol.startsWith('v8::')) return 'V8 runtime'
    return 'node other'
  }
  return dso
}

/** µs per request by category, from `perf report --no-children --sort dso,sym -g none` text and the CPU per request. */
export function splitReport (reportText: string, cpuPerRequestUs: number): Map<string, number> {
  const split = new Map<string, number>()
  for (const raw of reportText.split('\n')) {
    const line = raw.replace(/\[JIT\] tid \d+/, 'JIT')
    const match = /^\s*([\d.]+)%\s+(\S+)\s+(?:\[.\]\s+)?(.*)$/.exec(line)
    if (match === null) continue
    const [, share, dso, symbol] = match as unknown as [string, string, string, string]
    const category = categoryOf(dso, symbol.trim())
    split.set(category, (split.get(category) ?? 0) + Number(share) * cpuPerRequestUs / 100)
  }
  return split
}

/** A markdown table of two splits, largest difference first; categories under 0.05 µs on both sides are left out. */
export function splitTable (a: Map<string, number>, b: Map<string, number>, names: [string, string]): string {
  const categories = [...new Set([...a.keys(), ...b.keys()])]
  const difference = (c: string): number => (b.get(c) ?? 0) - (a.get(c) ?? 0)
  const sum = (m: Map<string, number>): number => [...m.values()].reduce((x, y) => x + y, 0)
  const fmt = (n: number): string => n.toFixed(1)
  const signed = (n: number): string => `${n >= 0 ? '+' : ''}${fmt(n)}`
  const rows = categories.sort((x, y) => difference(y) - difference(x))
    .filter((c) => (a.get(c) ?? 0) >= 0.05 || (b.get(c) ?? 0) >= 0.05)
    .map((c) => `| ${c} | ${fmt(a.get(c) ?? 0)} | ${fmt(b.get(c) ?? 0)} | ${signed(difference(c))} |`)
  return [`| where | ${names[0]} µs | ${names[1]} µs | difference |`, '|---|---|---|---|', ...rows,
    `| total | ${fmt(sum(a))} | ${fmt(sum(b))} | ${signed(sum(b) - sum(a))} |`].join('\n')
}

function perfReport (file: string): string {
  return execFileSync('perf', ['report', '-i', file, '--no-children', '--sort', 'dso,sym', '-q', '-g', 'none'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { a: { type: 'string' }, 'a-us': { type: 'string' }, 'a-name': { type: 'string', default: 'a' }, b: { type: 'string' }, 'b-us': { type: 'string' }, 'b-name': { type: 'string', default: 'b' } } })
  if (values.a === undefined || values.b === undefined || values['a-us'] === undefined || values['b-us'] === undefined) {
    throw new Error('usage: perf-split --a A.perf.data --a-us µs --b B.perf.data --b-us µs [--a-name A] [--b-name B]')
  }
  const a = splitReport(perfReport(values.a), Number(values['a-us']))
  const b = splitReport(perfReport(values.b), Number(values['b-us']))
  process.stdout.write(splitTable(a, b, [values['a-name'], values['b-name']]) + '\n')
}
