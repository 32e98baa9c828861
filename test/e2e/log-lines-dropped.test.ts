import { request as httpRequest } from 'node:http'
import t from 'tap'
import { DROPPED_LINES_MESSAGE } from '../../src/logging/logger.js'
import { repoPath } from '../helpers/paths.js'
import { spawnPlainNode } from '../helpers/plain-node.js'
import { sample, scrape } from '../helpers/prometheus.js'
import { freePort } from '../helpers/spawn-gateway.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

function get (url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(url, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) })
    req.on('error', () => resolve(-1))
    req.end()
  })
}

// A log shipper that stalls: `lanegate start` with stdout a pipe nobody reads for a while. The lines beyond the
// destination's 8 MiB are dropped; the drop must show on /metrics at once and in the log once the reader is back.
t.test('stdout backed up: lanegate_log_lines_dropped_total counts the dropped lines, and once read again one warn line carries dropped_lines', async (t) => {
  const cfg = await gatewayFixture().set('server.data_dir', './data').write()
  t.teardown(() => cfg.remove())
  const port = await freePort()
  const adminPort = await freePort()
  const admin = `http://127.0.0.1:${adminPort}`
  // A plain process (plain-node.ts): this runner's hooks in the gateway would open its stdout their own way.
  const child = spawnPlainNode([repoPath('bin/lanegate.js'), 'start', '--config', cfg.file, '--port', String(port), '--host', '127.0.0.1'],
    { LANEGATE_LOG_LEVEL: 'info', LANEGATE_ADMIN_PORT: String(adminPort) }, ['ignore', 'pipe', 'pipe'])
  if (child.stdout === null || child.stderr === null) throw new Error('no pipes')
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.teardown(async () => {
    child.kill('SIGTERM')
    await exited
  })
  let errors = ''
  child.stderr.on('data', (d: Buffer) => { errors += d.toString() })
  // The stalled reader: paused, the stream stops reading the pipe once its own buffer is full, and the pipe fills.
  child.stdout.pause()

  await waitFor(() => get(`http://127.0.0.1:${port}/healthz`).then((s) => s === 200), { what: `lanegate to answer /healthz (stderr: ${errors})` })
  await waitFor(() => scrape(admin).then(() => true), { what: 'the admin listener' })
  // An unknown path is logged with its URL at info (incoming, completed): 8 KB of query fills 8 MiB in ~500 requests.
  const pad = 'x'.repeat(8000)
  let sent = 0
  let answered = 0
  const dropped = await waitFor(async () => {
    sent += 20
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get(`http://127.0.0.1:${port}/no-such-route?pad=${pad}`)))
    answered += statuses.filter((s) => s === 404).length
    return sample(await scrape(admin), 'lanegate_log_lines_dropped_total')
  }, { what: 'lines to be dropped', timeoutMs: 120_000, intervalMs: 0 })
  t.ok(dropped > 0, `${dropped} lines dropped after ${answered} requests, counted while stdout is still backed up`)
  t.equal(answered, sent, 'every request was answered (404) while the log was backed up')

  // The reader is back: what the gateway held is written, then the warn line.
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stdout.resume()
  await waitForText(() => output, '"dropped_lines"', { what: 'the dropped_lines warn line' })
  const total = sample(await scrape(admin), 'lanegate_log_lines_dropped_total')
  const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
  const warnings = lines.filter((l) => 'dropped_lines' in l)
  t.equal(warnings.length, 1, 'one warn line for one stall')
  const warn = warnings[0] as Record<string, unknown>
  t.same(Object.keys(warn).sort(), ['dropped_lines', 'hostname', 'level', 'msg', 'pid', 'time'])
  t.same({ level: warn.level, msg: warn.msg, dropped_lines: warn.dropped_lines }, { level: 40, msg: DROPPED_LINES_MESSAGE, dropped_lines: total },
    'the warn line tells as many lines as the counter counted')
  t.ok(total >= dropped, 'the counter never goes down')
})
