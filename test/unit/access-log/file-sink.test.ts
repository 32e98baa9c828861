import { mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { createFileSink } from '../../../src/logging/access-log/file-sink.js'
import type { SinkHooks } from '../../../src/logging/access-log/sink.js'
import { waitFor } from '../../helpers/wait-for.js'

async function tempDir (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-access-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Hooks that count drops and keep failures. */
function recordingHooks (): SinkHooks & { dropped: number, failures: unknown[] } {
  const hooks = {
    dropped: 0,
    failures: [] as unknown[],
    onDropped (_sink: string, lines: number) { hooks.dropped += lines },
    onFailure (_sink: string, error: unknown) { hooks.failures.push(error) },
  }
  return hooks
}

/** The lines of every file in `dir`, by file name. */
async function linesByFile (dir: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  for (const name of (await readdir(dir)).sort()) {
    out.set(name, (await readFile(join(dir, name), 'utf8')).split('\n').filter((line) => line !== ''))
  }
  return out
}

const pad = (n: number): string => `{"n":${n},"pad":"${'x'.repeat(80)}"}\n`
const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

t.test('under load the file rotates by size and loses no line: lines sent = lines across the rotated files', async (t) => {
  const dir = await tempDir(t)
  const hooks = recordingHooks()
  const sink = createFileSink({ name: 'file', path: join(dir, 'access.log'), maxBytes: 65_536, keep: 1000 }, hooks)
  const sent = 30_000
  // Bursts of 500 lines with the loop let go between them: rotations happen while lines keep coming.
  for (let n = 0; n < sent; n++) {
    sink.write(pad(n))
    if (n % 500 === 499) await yieldToIo()
  }
  await sink.close(60_000)
  const files = await linesByFile(dir)
  t.ok(files.size > 30, `rotated into ${files.size} files`)
  const seen = new Set<number>()
  for (const [name, lines] of files) {
    t.ok((await stat(join(dir, name))).size <= 65_536, `${name} stays within max_bytes`)
    for (const line of lines) seen.add((JSON.parse(line) as { n: number }).n)
  }
  t.equal(seen.size, sent, 'every line sent is in one of the files')
  t.equal([...files.values()].reduce((sum, lines) => sum + lines.length, 0), sent, 'and only once')
  t.equal(hooks.dropped, 0)
  t.same(hooks.failures, [])
  // Newest last: access.log holds the last line, access.log.1 the lines just before it.
  const newest = files.get('access.log') ?? []
  t.equal((JSON.parse(newest[newest.length - 1] ?? '{}') as { n: number }).n, sent - 1)
})

t.test('keep N: only the newest N rotated files stay', async (t) => {
  const dir = await tempDir(t)
  const hooks = recordingHooks()
  const sink = createFileSink({ name: 'file', path: join(dir, 'access.log'), maxBytes: 1024, keep: 3 }, hooks)
  for (let n = 0; n < 200; n++) sink.write(pad(n))
  await sink.close(60_000)
  const files = await linesByFile(dir)
  t.same([...files.keys()], ['access.log', 'access.log.1', 'access.log.2', 'access.log.3'])
  const kept = [...files.get('access.log.3') ?? [], ...files.get('access.log.2') ?? [], ...files.get('access.log.1') ?? [], ...files.get('access.log') ?? []]
    .map((line) => (JSON.parse(line) as { n: number }).n)
  t.same(kept, Array.from({ length: kept.length }, (_, i) => 200 - kept.length + i), 'the kept files hold the newest lines, in order')
})

t.test('daily: a line of a new UTC day starts a new file', async (t) => {
  const dir = await tempDir(t)
  let clock = Date.parse('2026-11-28T23:59:00Z')
  const daily = createFileSink({ name: 'file', path: join(dir, 'daily.log'), daily: true, now: () => clock }, recordingHooks())
  daily.write('{"day":28}\n')
  await waitFor(async () => (await readFile(join(dir, 'daily.log'), 'utf8').catch(() => '')).includes('28'), { what: 'the first line written' })
  clock = Date.parse('2026-11-29T00:00:01Z')
  daily.write('{"day":29}\n')
  await daily.close(60_000)
  t.equal(await readFile(join(dir, 'daily.log.1'), 'utf8'), '{"day":28}\n')
  t.equal(await readFile(join(dir, 'daily.log'), 'utf8'), '{"day":29}\n')
})

t.test('reopen (SIGUSR1 after an outside logrotate moved the file): later lines go to a new file at the path', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'access.log')
  const sink = createFileSink({ name: 'file', path }, recordingHooks())
  sink.write('{"n":1}\n')
  await waitFor(async () => (await readFile(path, 'utf8').catch(() => '')) === '{"n":1}\n', { what: 'the first line written' })
  await rename(path, `${path}.moved`)
  sink.write('{"n":2}\n')
  await waitFor(async () => (await readFile(`${path}.moved`, 'utf8')).includes('"n":2'), { what: 'the second line in the moved file (still open)' })
  sink.reopen()
  sink.write('{"n":3}\n')
  await sink.close(60_000)
  t.equal(await readFile(`${path}.moved`, 'utf8'), '{"n":1}\n{"n":2}\n')
  t.equal(await readFile(path, 'utf8'), '{"n":3}\n')
})

t.test('a sink slower than the traffic drops past its buffer and counts every line it dropped', async (t) => {
  const dir = await tempDir(t)
  const hooks = recordingHooks()
  const sink = createFileSink({ name: 'file', path: join(dir, 'access.log'), bufferBytes: 2048 }, hooks)
  // Written in one go: the writer cannot take anything until this loop lets go.
  for (let n = 0; n < 1000; n++) sink.write(pad(n))
  t.ok(hooks.dropped > 900, `${hooks.dropped} dropped at once, none waited for`)
  await sink.close(60_000)
  const written = (await linesByFile(dir)).get('access.log') ?? []
  t.ok(written.length > 0)
  t.equal(written.length + hooks.dropped, 1000, 'lines written + lines counted as dropped = lines sent')
})

t.test('a file that cannot be opened: its lines are dropped and counted, the failure told once', async (t) => {
  const dir = await tempDir(t)
  const hooks = recordingHooks()
  const sink = createFileSink({ name: 'audit', path: join(dir, 'missing-folder', 'access.log') }, hooks)
  sink.write('{"n":1}\n')
  await waitFor(() => hooks.dropped === 1, { what: 'the first line dropped' })
  sink.write('{"n":2}\n')
  await waitFor(() => hooks.dropped === 2, { what: 'the second line dropped' })
  await sink.close(1000)
  t.equal(hooks.failures.length, 1)
  t.match(String(hooks.failures[0]), /ENOENT/)
})
