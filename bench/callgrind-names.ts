import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { perfMapBeside } from './callgrind.js'

/**
 * Names for the JIT code in a callgrind dump. callgrind lists V8's generated code as `???:0x…` (it reads no symbols
 * for it); a node started with `--perf-basic-prof` writes `/tmp/perf-<pid>.map`, one line per code object made
 * (`<start hex> <size hex> <name>`). This joins the two, so a dump of `--instructions` (or of any server run under
 * callgrind with that flag) lists instructions per request by JavaScript function, beside the builtins and C++ that
 * callgrind names itself: `node dist/bench/callgrind-names.js <dump> <requests in the dump> [rows]` (the map is
 * found beside the dump, or by the pid the dump names).
 * That is how the sixth session of issue 24 found its cuts (docs/performance.md).
 */

export interface MapEntry {
  readonly start: number
  readonly size: number
  readonly name: string
  /** The line it was written on: V8 reuses code space, and the latest entry covering an address is the live one. */
  readonly order: number
}

/** The entries of a perf map file's text, sorted by start address. */
export function parsePerfMap (text: string): MapEntry[] {
  const entries: MapEntry[] = []
  text.split('\n').forEach((line, order) => {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (match !== null) entries.push({ start: parseInt(match[1] as string, 16), size: parseInt(match[2] as string, 16), name: match[3] as string, order })
  })
  return entries.sort((a, b) => a.start - b.start || a.order - b.order)
}

/** How far back from the last entry starting at or before an address overlapping entries are looked for. */
const LOOK_BACK = 200

/** The name of the code at `address`: of the entries covering it, the one written last; undefined when none does. */
export function nameAt (entries: readonly MapEntry[], address: number): string | undefined {
  let low = 0
  let high = entries.length
  while (low < high) {
    const mid = (low + high) >> 1
    if ((entries[mid] as MapEntry).start <= address) low = mid + 1
    else high = mid
  }
  let best: MapEntry | undefined
  for (let i = low - 1; i >= 0 && i >= low - LOOK_BACK; i--) {
    const entry = entries[i] as MapEntry
    if (address < entry.start + entry.size && (best === undefined || entry.order > best.order)) best = entry
  }
  return best?.name
}

/** `callgrind_annotate`'s flat list (`<count> (<share>)  <file:function> [<object>]`) as [function, count] pairs. */
export function parseAnnotate (text: string): Array<[string, number]> {
  const rows: Array<[string, number]> = []
  for (const line of text.split('\n')) {
    const match = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line)
    if (match === null || line.includes('PROGRAM TOTALS')) continue
    rows.push([(match[2] as string).replace(/\s*\[[^\]]*\]$/, ''), Number((match[1] as string).replaceAll(',', ''))])
  }
  return rows
}

/** Instructions per request by function, JIT code named from the map, most first. */
export function byFunction (rows: ReadonlyArray<[string, number]>, entries: readonly MapEntry[], requests: number): Array<[string, number]> {
  const totals = new Map<string, number>()
  for (const [fn, count] of rows) {
    const jit = /^\?\?\?:0x([0-9a-f]+)$/.exec(fn)
    const name = jit === null ? fn.replace(/^\?\?\?:/, '') : `JIT ${nameAt(entries, parseInt(jit[1] as string, 16)) ?? 'unnamed'}`
    totals.set(name, (totals.get(name) ?? 0) + count)
  }
  return [...totals].map(([name, count]): [string, number] => [name, count / requests]).sort((a, b) => b[1] - a[1])
}

/**
 * The perf map of the process a dump came from: beside the dump when the bench kept it there (a dump
 * `<server>.callgrind.<n>` has `<server>.callgrind.perf.map`), else node's own `/tmp/perf-<pid>.map` of the pid
 * callgrind wrote in the dump's header (`pid: N`).
 */
export function perfMapOf (dumpPath: string, dumpText: string, exists: (path: string) => boolean = existsSync): string {
  const beside = perfMapBeside(dumpPath.replace(/\.\d+$/, ''))
  if (exists(beside)) return beside
  const pid = /^pid:\s*(\d+)$/m.exec(dumpText)?.[1]
  if (pid === undefined) throw new Error('the dump names no pid')
  return `/tmp/perf-${pid}.map`
}

async function main (): Promise<void> {
  const [dump, requests, rows = '60'] = process.argv.slice(2)
  if (dump === undefined || requests === undefined) {
    throw new Error('usage: node dist/bench/callgrind-names.js <callgrind dump> <requests in the dump> [rows]')
  }
  const map = perfMapOf(dump, await readFile(dump, 'utf8'))
  const { stdout } = await promisify(execFile)('callgrind_annotate', ['--threshold=100', dump], { maxBuffer: 256 * 1024 * 1024 })
  const ranked = byFunction(parseAnnotate(stdout), parsePerfMap(await readFile(map, 'utf8')), Number(requests))
  console.log(`${ranked.reduce((sum, [, n]) => sum + n, 0).toFixed(0)} instructions per request (JIT code named from ${map})`)
  for (const [name, perRequest] of ranked.slice(0, Number(rows))) console.log(`${perRequest.toFixed(0).padStart(8)}  ${name}`)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
