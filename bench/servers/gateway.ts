import { parseArgs } from 'node:util'
import { bootGateway } from '../../src/boot.js'

/**
 * The system under test: the gateway booted in this process from a bench config file (see bench-config.ts),
 * listening on 127.0.0.1. SIGTERM closes it cleanly, so `--cpu-prof` profiles get written.
 */
const { values } = parseArgs({ options: { port: { type: 'string' }, config: { type: 'string' } } })
const booted = await bootGateway({ file: values.config })
await booted.app.listen({ port: Number(values.port), host: '127.0.0.1' })
process.on('SIGTERM', () => {
  void booted.close().then(() => process.exit(0), () => process.exit(1))
})
