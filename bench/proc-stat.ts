import { readFileSync, readdirSync } from 'node:fs'
import { execFileSync } from 'node:child_process'

/**
 * Linux process accounting read from /proc. CPU time is reported in clock ticks (`getconf CLK_TCK`, 100 on
 * every common kernel); the harness converts to microseconds.
 */

let ticksPerSecond: number | undefined

/** Clock ticks per second for /proc/<pid>/stat (asks getconf once; 100 if that fails). */
export function clockTicks (): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/**
 * Parses the text of /proc/<pid>/stat and returns utime + stime in ticks. The command name (field 2) is in
 * parentheses and may itself contain spaces or parentheses, so fields are counted from the last ')'.
 */
export function parseStatTicks (stat: string): number {
  const close = stat.lastIndexOf(')')
  if (close < 0) throw new Error('not a /proc/<pid>/stat line')
  // After ")": field 3 (state) is index 0, so utime (field 14) is index 11 and stime (field 15) index 12.
  const fields = stat.slice(close + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/** Process ids of `pid`'s children (all threads' children), from /proc/<pid>/task/<tid>/children. */
export function childPids (pid: number): number[] {
  const out: number[] = []
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
      if (text !== '') for (const child of text.split(' ')) out.push(Number(child))
    } catch { /* the thread ended meanwhile */ }
  }
  return out
}

/** `pid` and all its descendants (nginx: master and workers). */
export function processTree (pid: number): number[] {
  const all = [pid]
  for (let i = 0; i < all.length; i++) all.push(...childPids(all[i]))
  return all
}

/** CPU time (user + system, every thread) used so far by `pid` and its descendants, in microseconds. */
export function treeCpuMicros (pid: number): number {
  let ticks = 0
  for (const p of processTree(pid)) {
    try {
      ticks += parseStatTicks(readFileSync(`/proc/${p}/stat`, 'utf8'))
    } catch { /* gone */ }
  }
  return ticks * 1e6 / clockTicks()
}

/** CPU time used so far by `pid` alone (not its children: the workers primary's own share), in microseconds. */
export function pidCpuMicros (pid: number): number {
  try {
    return parseStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * 1e6 / clockTicks()
  } catch {
    return Number.NaN
  }
}

/**
 * Time on a CPU of every live thread of `pid` (the first field of /proc/<pid>/task/<tid>/schedstat), in
 * microseconds with nanosecond precision: an idle gateway uses a few ms a second, which clock ticks (10 ms) cannot
 * resolve. Threads that ended are not counted, so it suits idle processes, not ones under load. NaN if it is gone.
 */
export function threadsRunMicros (pid: number): number {
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return Number.NaN
  }
  let nanos = 0
  for (const tid of tasks) {
    try {
      nanos += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch { /* the thread ended meanwhile */ }
  }
  return nanos / 1000
}

/** Resident set size and its peak (VmRSS, VmHWM) of one process, in bytes. */
export function memoryOf (pid: number): { rss: number, peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
    return match === null ? Number.NaN : Number(match[1]) * 1024
  }
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}
