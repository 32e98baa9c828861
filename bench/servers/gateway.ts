import { spawn, type ChildProcess } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { bootGateway } from '../../src/boot.js'
import { startAdminListener } from '../../src/admin-listener.js'

/**
 * The system under test: the gateway booted in this process from a bench config file (see bench-config.ts),
 * listening on 127.0.0.1. SIGTERM closes it cleanly, so `--cpu-prof` profiles get written.
 *
 * `--console` (npm run bench -- --console) keeps the operator console open: the admin listener serves (its ring
 * samples the counters once a second) and a poller in a process of its own asks for the overview (incrementally,
 * as the page does) and the upstreams view once a second each — what an open console page costs the gateway.
 */
/** An open console page's requests: two views a second, the overview only asking for its new points. */
const CONSOLE_POLLER = `
const base = process.argv[1]
let since = 0
setInterval(async () => {
  try {
    const overview = await (await fetch(base + '/api/console/overview?since=' + since)).json()
    for (const point of overview.series) since = Math.max(since, point.t)
    await (await fetch(base + '/api/console/upstreams')).arrayBuffer()
  } catch {}
}, 1000)
`

const { values } = parseArgs({ options: { port: { type: 'string' }, config: { type: 'string' }, console: { type: 'boolean', default: false } } })
const booted = await bootGateway({ file: values.config })
await booted.app.listen({ port: Number(values.port), host: '127.0.0.1' })
let poller: ChildProcess | undefined
if (values.console === true) {
  const admin = await startAdminListener(booted)
  if (admin === undefined) throw new Error('--console needs the admin listener (the bench config has admin: false)')
  const url = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`
  poller = spawn(process.execPath, ['-e', CONSOLE_POLLER, url], { stdio: 'ignore' })
}
process.on('SIGTERM', () => {
  poller?.kill()
  void booted.close().then(() => process.exit(0), () => process.exit(1))
})
