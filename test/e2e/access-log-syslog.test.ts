import { readFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { hostname } from 'node:os'
import t, { type Test } from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { startOwnRsyslog, rsyslogAvailable, type OwnRsyslog } from '../helpers/own-rsyslog.js'
import { repoPath } from '../helpers/paths.js'
import { waitFor } from '../helpers/wait-for.js'

const required = process.env.LANEGATE_REQUIRE_SERVICES === '1'

async function rsyslogFor (t: Test): Promise<OwnRsyslog | undefined> {
  if (!rsyslogAvailable()) {
    if (required) t.fail('rsyslogd is not installed (apt-get install -y rsyslog; .ci/run does it)')
    else t.comment('skipped: rsyslogd is not installed')
    return undefined
  }
  const rsyslog = await startOwnRsyslog()
  t.teardown(() => rsyslog.stop())
  return rsyslog
}

/** The demo gateway with one syslog sink to `rsyslog` over `transport`, listening on a free port. */
async function gatewayLoggingTo (t: Test, rsyslog: OwnRsyslog, transport: 'udp' | 'tcp'): Promise<string> {
  const demo = await readFile(repoPath('gateway.yaml'), 'utf8')
  const block = `access_log:\n  fields: [method, path, status, route]\n  sinks:\n    - { type: syslog, host: 127.0.0.1, port: ${rsyslog.port}, transport: ${transport}, facility: local3, app_name: edge-gw }\n`
  const gw = await buildTestApp({ yaml: `${demo}\n${block}`, logLevel: 'warn' })
  t.teardown(() => gw.close())
  await gw.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`
}

for (const transport of ['udp', 'tcp'] as const) {
  t.test(`syslog over ${transport}: lines arrive in a real rsyslog and parse as RFC 5424 with the documented fields`, async (t) => {
    const rsyslog = await rsyslogFor(t)
    if (rsyslog === undefined) return
    const base = await gatewayLoggingTo(t, rsyslog, transport)
    // UDP gives no sign that rsyslog's input is up: ask until a line has arrived, then count from there.
    let n = 0
    await waitFor(async () => {
      await (await fetch(`${base}/healthz?n=${n++}`)).arrayBuffer()
      return (await rsyslog.lines()).length > 0
    }, { what: `a first line through ${transport}` })
    for (let i = 0; i < 20; i++) await (await fetch(`${base}/healthz?n=${n++}`)).arrayBuffer()
    const lines = await waitFor(async () => {
      const got = await rsyslog.lines()
      return got.some((l) => l.endsWith(`"route":null,"path":"/healthz?n=${n - 1}","status":200}`)) ? got : undefined
    }, { what: 'the last line' })
    const parsed = lines.map((line) => {
      const [version, pri, host, app, procid, msgid, sd, ...msg] = line.split('|')
      return { version, pri, host, app, procid, msgid, sd, msg: JSON.parse(msg.join('|')) as Record<string, unknown> }
    })
    // local3 (19) * 8 + info (6) = 158.
    for (const p of parsed) {
      t.same({ ...p, msg: undefined }, { version: '1', pri: '158', host: hostname(), app: 'edge-gw', procid: String(process.pid), msgid: 'access', sd: '-', msg: undefined })
    }
    const paths = parsed.map((p) => p.msg.path)
    const last20 = Array.from({ length: 20 }, (_, i) => `/healthz?n=${n - 20 + i}`)
    if (transport === 'tcp') t.same(paths.slice(-20), last20, 'over TCP every line arrives, in order')
    else t.ok(last20.every((path) => paths.includes(path)), 'over UDP on loopback every line arrives')
    t.same(parsed[parsed.length - 1]?.msg, { method: 'GET', route: null, path: `/healthz?n=${n - 1}`, status: 200 })
    t.equal(JSON.stringify(parsed[parsed.length - 1]?.msg), `{"method":"GET","route":null,"path":"/healthz?n=${n - 1}","status":200}`, 'the fields in the documented order')
  })
}
