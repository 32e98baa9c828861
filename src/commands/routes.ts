import { parseArgs } from 'node:util'
import type { Command } from './command.js'
import { loadOrReport } from './load-or-report.js'

const USAGE = `lanegate routes [--config FILE] [--json]

Lists every method and path FILE (default ./gateway.yaml) serves, with its service, route id, error envelope and
resolved policy chain (service policies, then the route's own, in run order, options summarised). --json prints
the same as JSON.`

/** `lanegate routes`. */
async function routesCommand (args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: 'string', default: 'gateway.yaml' }, json: { type: 'boolean', default: false } } })
  const loaded = await loadOrReport(values.config)
  if (loaded === undefined) return 1
  const { routesJson, routesTable, servedRoutes } = await import('../describe/route-table.js')
  const rows = servedRoutes(loaded.config, loaded.catalog)
  console.log(values.json ? JSON.stringify(routesJson(rows), null, 2) : routesTable(rows))
  return 0
}


export const routes: Command = {
  name: 'routes',
  summary: 'List every served method and path with its service, envelope and policy chain',
  usage: USAGE,
  run: routesCommand,
}
