import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { pidFilePath, readPidFile, writePidFile } from '../../src/ipc/pid-file.js'

// What docs/operations.md says of a pid file a SIGKILLed gateway left behind: stop/reload refuse it (the file stays),
// start overwrites it.

/** A pid that was a process a moment ago and has exited. */
function deadPid (): number {
  const child = spawnSync(process.execPath, ['-e', ''])
  return child.pid as number
}

t.test('a stale pid file (its process gone) is reported, not signalled, and left in place; writing one overwrites it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lanegate-pid-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = pidFilePath(dir)
  const pid = deadPid()
  writeFileSync(file, `${pid}\n`)
  t.same(readPidFile(dir), { problem: `${file} names pid ${pid}, which is not running (a gateway that was killed leaves it behind)` })
  t.ok(existsSync(file), 'the stale file is left as it is')
  t.equal(writePidFile(dir), file)
  t.equal(readFileSync(file, 'utf8'), `${process.pid}\n`, 'a new start overwrites it with its own pid')
  t.same(readPidFile(dir), { pid: process.pid })
})
