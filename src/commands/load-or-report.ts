import { ConfigError, formatProblem } from '../config/config-error.js'
import { counted } from '../errors/counted.js'
import { loadGatewayConfig, type LoadedGatewayConfig } from '../config/second-pass/load-gateway-config.js'

/** Loads FILE through the real loader (plugins: included); prints its problems and returns undefined when invalid. */
export async function loadOrReport (file: string): Promise<LoadedGatewayConfig | undefined> {
  try {
    return await loadGatewayConfig(file)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    for (const p of error.problems) console.error(`error: ${formatProblem(file, p)}`)
    console.error(`${file}: ${counted(error.problems.length, 'error')}`)
    return undefined
  }
}

