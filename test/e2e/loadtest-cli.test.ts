import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { parseDocument } from 'yaml'
import { bootGateway } from '../../src/start/boot.js'
import { loadtestCommand } from '../../src/commands/loadtest.js'
import { parseLoadtestArgs } from '../../src/loadtest/options.js'
import { runLoadtest } from '../../src/loadtest/run-loadtest.js'
import { repoPath } from '../helpers/paths.js'

const demo = await readFile(repoPath('gateway.yaml'), 'utf8')

/** The demo config with a private data dir, no logs, a 50-per-minute content limit and 60 s content tokens. */
function configText (dataDir: string, issuer = 'http://127.0.0.1:1'): string {
  const doc = parseDocument(demo)
  doc.setIn(['server', 'data_dir'], dataDir)
  doc.setIn(['services', 'content', 'source_dir'], repoPath('content'))
  doc.setIn(['server', 'log_level'], 'silent')
  doc.setIn(['issuer', 'issuer'], issuer)
  doc.setIn(['issuer', 'scope_lifetimes', 'engage:content.view'], 60)
  doc.setIn(['issuer', 'scope_lifetimes', 'engage:circulars.view'], 60)
  doc.setIn(['rate_limits', 'content-per-client', 'points'], 50)
  return doc.toString()
}

/** A gateway listening on 127.0.0.1, plus a config file naming it as issuer (what the CLI reads). */
async function startGateway (t: Test): Promise<{ url: string, configFile: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-loadtest-'))
  const booted = await bootGateway({ text: configText(dir) })
  t.teardown(async () => {
    await booted.close()
    await rm(dir, { recursive: true, force: true })
  })
  await booted.app.listen({ port: 0, host: '127.0.0.1' })
  const address = booted.app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  const configFile = join(dir, 'gateway.yaml')
  await writeFile(configFile, configText(dir, url))
  return { url, configFile }
}

function capture (): { io: Parameters<typeof loadtestCommand>[1] & object, out: () => string, err: () => string } {
  let out = ''
  let err = ''
  return {
    io: { stdout: { write: (s: string) => { out += s } }, stderr: { write: (s: string) => { err += s } } },
    out: () => out,
    err: () => err,
  }
}

const CONTENT = ['--client', 'demo-content', '--secret', 'demo-content-secret']

t.test('runLoadtest counts statuses and attributes the 429s to the content limit', async (t) => {
  const { configFile } = await startGateway(t)
  const summary = await runLoadtest(parseLoadtestArgs(['--config', configFile, ...CONTENT, 'GET', '/public/v1/content', '-c', '4', '-d', '2']))
  t.equal(summary.statusCounts['200'], 50, 'exactly the 50 the limit allows')
  const limited = summary.statusCounts['429']
  t.ok(limited > 0)
  t.same(Object.keys(summary.statusCounts).sort(), ['200', '429'])
  t.equal(summary.requests, 50 + limited)
  t.equal(summary.errors, 0)
  t.same(summary.rateLimited, [{
    limit: '50',
    error: 'Too many requests',
    names: ['content-per-client (50/60s per client)'],
    count: limited,
  }])
  t.ok(summary.latencyMs.p50 <= summary.latencyMs.p99 && summary.latencyMs.p99 <= summary.latencyMs.max)
})

t.test('a run that outlives its token refreshes it and keeps being authenticated', async (t) => {
  const { url } = await startGateway(t)
  // Content tokens live 60 s here; refreshing 59 s early means a refresh after 1 s of a 2.5 s run.
  const summary = await runLoadtest(parseLoadtestArgs(['--url', url, ...CONTENT, 'GET', '/public/v1/content', '-c', '2', '-d', '2.5']), { refreshBeforeSeconds: 59 })
  t.ok(summary.tokenRefreshes >= 1, `refreshed ${summary.tokenRefreshes} time(s)`)
  t.equal(summary.statusCounts['401'], undefined)
  t.equal(summary.statusCounts['200'], 50)
})

t.test('the command takes the base URL from the config\'s issuer and prints the table', async (t) => {
  const { url, configFile } = await startGateway(t)
  const { io, out, err } = capture()
  const code = await loadtestCommand(['--config', configFile, ...CONTENT, 'GET', '/public/v1/content', '-c', '2', '-d', '2'], io)
  t.equal(code, 0, err())
  const text = out()
  t.match(text, `target              GET ${url}/public/v1/content`)
  t.match(text, /\nreq\/s +\d+\.\d\n/)
  t.match(text, /\nlatency p99 +\d+\.\d\d ms\n/)
  t.match(text, /\nstatus codes +200: 50, 429: \d+\n/)
  t.match(text, /\n {2}\d+× +X-RateLimit-Limit 50 = content-per-client \(50\/60s per client\) — Too many requests/)
  t.match(err(), /^\d\/2s {2}\d+ requests/m, 'progress lines on stderr')
})

t.test('a wrong secret exits 1 with the token endpoint\'s answer', async (t) => {
  const { url } = await startGateway(t)
  const { io, err } = capture()
  const code = await loadtestCommand(['--url', url, '--client', 'demo-content', '--secret', 'wrong', 'GET', '/public/v1/content', '-d', '1'], io)
  t.equal(code, 1)
  t.match(err(), /^lanegate loadtest: could not obtain a token: the token endpoint answered 401 invalid_client: Client authentication failed\./)
})

t.test('bad usage exits 2 with the usage text', async (t) => {
  const { io, err } = capture()
  t.equal(await loadtestCommand(['--client', 'x', '--secret', 'y', 'GET'], io), 2)
  t.match(err(), 'lanegate loadtest: expected METHOD PATH, got "GET"')
  t.match(err(), 'lanegate loadtest --client ID --secret S')
})
