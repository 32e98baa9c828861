import { startCsSimulator } from './cs-simulator.js'
import { startLaneSimulator } from './lane-simulator.js'
import { demoPrices, startPricingSimulator } from './pricing-simulator.js'

/**
 * Standalone simulators for `npm start` demos (`npm run simulators`): lanes on 9101, 9102 and 9190, the
 * stream materialization service on 9200 and two instances of a legacy pricing service on 9301 and 9302 (the
 * `pricing` proxy service's targets, docs/proxy.md), on 127.0.0.1 (override with SIM_HOST). Ctrl-C stops them.
 */
async function main (): Promise<void> {
  const host = process.env.SIM_HOST ?? '127.0.0.1'
  const lanes = await Promise.all([
    startLaneSimulator({ name: 'lane-9101', port: 9101, host }),
    startLaneSimulator({ name: 'lane-9102', port: 9102, host }),
    startLaneSimulator({ name: 'lane-9190', port: 9190, host }),
  ])
  const cs = await startCsSimulator({ port: 9200, host })
  // The demo's upstream credential (gateway.yaml: services.pricing.upstream.credential, PRICING_TOKEN).
  const credential = process.env.PRICING_TOKEN ?? 'Bearer demo-pricing-upstream-token'
  // Two instances over one price table: a write through either is read back from both.
  const prices = demoPrices()
  const pricing = await Promise.all([
    startPricingSimulator({ name: 'pricing-9301', port: 9301, host, credential, prices }),
    startPricingSimulator({ name: 'pricing-9302', port: 9302, host, credential, prices }),
  ])
  for (const lane of lanes) console.log(`lane simulator ${lane.name} on http://${host}:${lane.port}`)
  console.log(`stream materialization simulator on http://${host}:${cs.port}`)
  for (const p of pricing) console.log(`legacy pricing simulator ${p.name} on ${p.url}`)
  const stop = (): void => {
    Promise.all([...lanes.map((l) => l.close()), cs.close(), ...pricing.map((p) => p.close())]).then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
