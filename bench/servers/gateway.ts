import { parseArgs } from 'node:util'
import { holdTickObjectShape } from '../../src/node-tuning/tick-object-shape.js'

// As bin/lanegate.js does: hold a tick object before the gateway's modules load (src/node-tuning/tick-object-shape.ts).
holdTickObjectShape()
const { bootGateway } = await import('../../src/start/boot.js')
const { startAdminListener } = await import('../../src/start/admin-listener.js')

/**
 * The system under test: the gateway booted in this process from a bench config file (see bench-config.ts),
 * listening on 127.0.0.1. SIGTERM closes it cleanly, so `--cpu-prof` profiles get written.
 *
 * `--admin` also starts the admin listener on the config's `admin.port`: for the console variants of `npm run bench --
 * --console`, so the console's ring samples the counters once a second and its views answer, and for the
 * proxy-mirror scenario, whose mirror counters are read from /metrics after the rounds. What polls the console (an
 * open page) is not started here: bench/console-poller.ts runs as the orchestrator's child on the load generator's
 * core, outside this process's tree, whose CPU is what the run measures.
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, config: { type: 'string' }, admin: { type: 'boolean', default: false } } })
const booted = await bootGateway({ file: values.config })
await booted.app.listen({ port: Number(values.port), host: '127.0.0.1' })
if (values.admin === true) {
  const admin = await startAdminListener(booted)
  if (admin === undefined) throw new Error('--admin needs the admin listener (the bench config has admin: false)')
}
process.on('SIGTERM', () => {
  void booted.close().then(() => process.exit(0), () => process.exit(1))
})
