import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, readdir, readFile, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'

/**
 * Running a server under valgrind's callgrind and reading how many instructions it executed (`--instructions`).
 * Instruction counts do not depend on how fast the host is at the moment, unlike the CPU time the other modes
 * read from /proc; they leave out the kernel (syscalls, the network stack) and every wait.
 */

const run = promisify(execFile)

/** Where valgrind and callgrind_control are looked for (Debian's package puts both in /usr/bin). */
const VALGRIND = ['/usr/bin/valgrind', '/usr/local/bin/valgrind']
const CONTROL = ['/usr/bin/callgrind_control', '/usr/local/bin/callgrind_control']

/** The valgrind binary, or undefined when valgrind (with callgrind_control beside it) is not installed. */
export function valgrindBinary (): string | undefined {
  const control = CONTROL.find((p) => existsSync(p))
  return control === undefined ? undefined : VALGRIND.find((p) => existsSync(p))
}

/**
 * The valgrind arguments that go before the server's own command line:
 * - `--smc-check=all-non-file`: V8 writes and rewrites machine code in anonymous memory; without it valgrind
 *   keeps running stale translations of code that changed (wrong counts, or a crash).
 * - `--instr-atstart=no`: start-up and warm-up run uninstrumented (several times faster); the harness switches
 *   instrumentation on around the measured requests only.
 * - no `--trace-children`: every server the mode measures is one process (a gateway with one worker serves in
 *   its own process; nginx runs with `master_process off`), and its pid is the one `callgrind_control` is given.
 */
export function callgrindArgs (outFile: string): string[] {
  return ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${outFile}`]
}

/**
 * V8 flags every node server gets under callgrind, besides the bench's own. `--perf-basic-prof` writes
 * `/tmp/perf-<pid>.map` (a line per code object V8 makes), which names the JIT code callgrind lists as `???:0x…`:
 * `node dist/bench/callgrind-names.js <dump> <requests>` (callgrind-names.ts). The server set moves each map beside
 * its server's dumps when it stops the server (keepPerfMap). Under callgrind a request takes
 * milliseconds, so V8's wall-clock heuristics see a process that is nearly idle, and its threads run in an order
 * valgrind's scheduler and the core's other work decide:
 * - `--no-memory-reducer`: the memory reducer (full GCs when allocation slows down) fired during and between the
 *   batches; after its GC a warm gateway counted 618k then 418k instructions per request against 121k before
 *   (half of them in TurboFan jobs re-optimising the request path).
 * - `--no-concurrent-recompilation`: TurboFan compiles on the main thread, at the same point of the request stream
 *   in every process, not whenever a helper thread gets its turn. With concurrent compiles, bare fastify's hello
 *   counted 96k per request in one process and 60k in another; without, 60.6–61.4k in four.
 * `--single-threaded` (GC on the main thread too) was tried and left: gateways' batches then differed by up to
 * 40 % (major-GC marking and deoptimisations landing in one batch), against ≤ 9 % with GC helpers kept.
 */
export const CALLGRIND_NODE_FLAGS = ['--no-memory-reducer', '--no-concurrent-recompilation', '--perf-basic-prof'] as const

/**
 * The instruction count (`Ir`) of a callgrind output file: its `totals:` line, whose values follow the order of
 * the `events:` line. The `summary:` line is not used: after instrumentation was switched off and on again,
 * callgrind 3.19 writes it as a wrapped-around 64-bit value, while `totals:` stays right.
 */
export function parseCallgrindTotals (text: string): number {
  const events = /^events:\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/)
  const totals = /^totals:\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/)
  if (events === undefined) throw new Error('not a callgrind output file: no "events:" line')
  if (totals === undefined) throw new Error('callgrind output has no "totals:" line')
  const index = events.indexOf('Ir')
  if (index < 0) throw new Error(`callgrind output counts no Ir (events: ${events.join(' ')})`)
  // A file with no cost at all may write fewer values than events: the missing ones are zero.
  const value = Number(totals[index] ?? '0')
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`callgrind totals: "${totals[index] ?? ''}" is not a count`)
  return value
}

/** Where the perf map of the server whose callgrind writes to `outFile` is kept: beside its dumps. */
export function perfMapBeside (outFile: string): string {
  return `${outFile}.perf.map`
}

/**
 * Moves node's `/tmp/perf-<pid>.map` of a stopped server under callgrind beside its dumps (perfMapBeside), so the
 * dumps can be named later and /tmp does not collect a map per server per run. Nothing when there is none (nginx).
 */
export async function keepPerfMap (pid: number, outFile: string): Promise<void> {
  const written = `/tmp/perf-${pid}.map`
  if (!existsSync(written)) return
  // A copy, then the original removed: the run's folder may be on another file system than /tmp.
  await copyFile(written, perfMapBeside(outFile))
  await rm(written, { force: true })
}

/** Sends one command to the callgrind of process `pid` (`-i on`, `-i off`, `-z`, `-d`); waits until it is done. */
export async function callgrindControl (pid: number, args: string[]): Promise<void> {
  await run('callgrind_control', [...args, String(pid)], { timeout: 60_000 })
}

/** The numbered dumps of output file `outFile` (`<outFile>.1`, `.2`, …), highest number first. */
async function dumpParts (outFile: string): Promise<number[]> {
  const prefix = `${basename(outFile)}.`
  const names = await readdir(dirname(outFile))
  return names.filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .map((n) => Number(n.slice(prefix.length))).sort((a, b) => b - a)
}

/**
 * Dumps the counters of process `pid` (whose callgrind writes to `outFile`) and returns the instructions counted
 * since they were last zeroed. callgrind writes each dump to `<outFile>.<n>`; the new one is the highest `n`.
 */
export async function dumpInstructions (pid: number, outFile: string): Promise<number> {
  const before = (await dumpParts(outFile))[0] ?? 0
  await callgrindControl(pid, ['-d'])
  // callgrind_control returns once the command is done; the file may still be closing: wait a little for it.
  for (let tries = 0; tries < 100; tries++) {
    const latest = (await dumpParts(outFile))[0] ?? 0
    if (latest > before) {
      const text = await readFile(join(dirname(outFile), `${basename(outFile)}.${latest}`), 'utf8')
      if (/^totals:/m.test(text)) return parseCallgrindTotals(text)
    }
    await sleep(50)
  }
  throw new Error(`callgrind of pid ${pid} wrote no dump after ${basename(outFile)}.${before}`)
}
