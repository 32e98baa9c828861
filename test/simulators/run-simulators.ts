import { parseArgs } from 'node:util'
import { startCsSimulator } from './cs-simulator.js'
import { startLaneSimulator } from './lane-simulator.js'
import { demoPrices, startPricingSimulator } from './pricing-simulator.js'
import { startSoapStoreSimulator } from './soap-store-simulator.js'

const USAGE = `npm run simulators [-- --only NAME[,NAME…] | --except NAME[,NAME…]]

Starts the demo's simulators on 127.0.0.1 (SIM_HOST to change; SIM_PORT_OFFSET=N shifts every port by N):
  lane-9101, lane-9102, lane-9190   store lanes (docs/data-exchange.md)
  cs-9200                           the stream materialization service
  pricing-9301, pricing-9302        two instances of the legacy pricing service (docs/proxy.md)
  soap-store-9401, soap-store-9402  a SOAP store system, SOAP 1.1 and SOAP 1.2 (docs/walkthrough-soap.md)
--only / --except pick some: run the pricing instances in processes of their own to stop one and see failover:
  npm run simulators -- --except pricing-9302 &
  npm run simulators -- --only pricing-9302 &     # kill this one (kill %2): GETs keep answering from 9301
Instances in one process share one price table; in separate processes each has its own.`

/** One simulator the command can start: its name (with its port) and how to start it. */
interface Simulator {
  name: string
  start (host: string, prices: Map<string, string>): Promise<{ describe: string, close (): Promise<void> }>
}

// SIM_PORT_OFFSET shifts every port (a second set beside the first, or a test on free ports).
const offset = Number(process.env.SIM_PORT_OFFSET ?? 0)

// The demo's upstream credential (gateway.yaml: services.pricing.upstream.credential, PRICING_TOKEN).
const credential = process.env.PRICING_TOKEN ?? 'Bearer demo-pricing-upstream-token'

function lane (port: number): Simulator {
  const name = `lane-${port}`
  return { name, start: async (host) => { const s = await startLaneSimulator({ name, port: port + offset, host }); return { describe: `lane simulator ${name} on http://${host}:${s.port}`, close: () => s.close() } } }
}

function pricing (port: number): Simulator {
  const name = `pricing-${port}`
  return { name, start: async (host, prices) => { const s = await startPricingSimulator({ name, port: port + offset, host, credential, prices }); return { describe: `legacy pricing simulator ${name} on ${s.url}`, close: () => s.close() } } }
}

function soapStore (port: number, version: '1.1' | '1.2'): Simulator {
  const name = `soap-store-${port}`
  return { name, start: async (host) => { const s = await startSoapStoreSimulator({ version, port: port + offset, host }); return { describe: `SOAP ${version} store simulator ${name} on ${s.url}/store (WSDL: ${s.url}/store?wsdl)`, close: () => s.close() } } }
}

const SIMULATORS: readonly Simulator[] = [
  lane(9101), lane(9102), lane(9190),
  { name: 'cs-9200', start: async (host) => { const s = await startCsSimulator({ port: 9200 + offset, host }); return { describe: `stream materialization simulator on http://${host}:${s.port}`, close: () => s.close() } } },
  pricing(9301), pricing(9302),
  soapStore(9401, '1.1'), soapStore(9402, '1.2'),
]

/** The simulators `--only` / `--except` select, or a sentence naming what is wrong. */
function selectSimulators (args: string[]): { chosen: Simulator[] } | { problem: string } {
  const { values } = parseArgs({ args, options: { only: { type: 'string' }, except: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
  if (values.help === true) return { problem: USAGE }
  if (values.only !== undefined && values.except !== undefined) return { problem: '--only and --except exclude each other' }
  const names = (list: string | undefined): string[] => (list ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '')
  const given = names(values.only ?? values.except)
  const unknown = given.filter((name) => !SIMULATORS.some((s) => s.name === name))
  if (unknown.length > 0) return { problem: `unknown simulator ${unknown.join(', ')} (known: ${SIMULATORS.map((s) => s.name).join(', ')})` }
  if (values.only !== undefined) return { chosen: SIMULATORS.filter((s) => given.includes(s.name)) }
  return { chosen: SIMULATORS.filter((s) => !given.includes(s.name)) }
}

/**
 * Standalone simulators for `npm start` demos (`npm run simulators`): lanes on 9101, 9102 and 9190, the
 * stream materialization service on 9200 and two instances of a legacy pricing service on 9301 and 9302 (the
 * `pricing` proxy service's targets, docs/proxy.md), a SOAP store system on 9401 (SOAP 1.1) and 9402 (SOAP 1.2;
 * docs/walkthrough-soap.md), on 127.0.0.1 (override with SIM_HOST), all or the ones
 * `--only` / `--except` name. Ctrl-C (or SIGTERM) stops them.
 */
async function main (): Promise<void> {
  const selected = selectSimulators(process.argv.slice(2))
  if ('problem' in selected) {
    console.error(selected.problem)
    process.exit(selected.problem === USAGE ? 0 : 1)
  }
  const host = process.env.SIM_HOST ?? '127.0.0.1'
  // Two pricing instances in one process share one table: a write through either is read back from both.
  const prices = demoPrices()
  const running = await Promise.all(selected.chosen.map((s) => s.start(host, prices)))
  for (const r of running) console.log(r.describe)
  const stop = (): void => {
    Promise.all(running.map((r) => r.close())).then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
