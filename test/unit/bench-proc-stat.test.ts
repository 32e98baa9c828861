import { spawn } from 'node:child_process'
import t from 'tap'
import { memoryOf, parseStatTicks, processTree, threadsRunMicros, treeCpuMicros } from '../../bench/proc-stat.js'

t.test('parseStatTicks adds utime and stime, counting fields after the last ")" of the command name', async (t) => {
  // Fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const stat = '4242 (node (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 11 0 1000 0 0'
  t.equal(parseStatTicks(stat), 287)
  t.throws(() => parseStatTicks('garbage'), /not a \/proc/)
})

t.test('treeCpuMicros grows while this process burns CPU', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const before = treeCpuMicros(process.pid)
  const until = Date.now() + 60
  let x = 0
  while (Date.now() < until) x += Math.sqrt(x + 1)
  t.ok(x > 0)
  t.ok(treeCpuMicros(process.pid) > before)
})

t.test('threadsRunMicros reads the threads\' time on a CPU, finer than a clock tick; NaN for a process that is gone', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const before = threadsRunMicros(process.pid)
  // Busy until this process has used 3 ms of CPU by getrusage (the same kernel counter, split into user and system).
  const cpuBefore = process.cpuUsage()
  let x = 0
  while ((({ user, system }) => user + system)(process.cpuUsage(cpuBefore)) < 3000) x += Math.sqrt(x + 1)
  const spent = threadsRunMicros(process.pid) - before
  t.ok(spent >= 2000, `${spent} µs read for 3 ms of CPU used`)
  t.ok(Number.isNaN(threadsRunMicros(2 ** 22 + 1)))
})

t.test('processTree includes a spawned child; memoryOf reads RSS and its peak', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' })
  t.teardown(() => { child.kill() })
  await new Promise((resolve) => child.once('spawn', resolve))
  t.ok(processTree(process.pid).includes(child.pid as number))
  const memory = memoryOf(process.pid)
  t.ok(memory.rss > 1024 * 1024)
  t.ok(memory.peak >= memory.rss)
})
