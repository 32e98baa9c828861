import type { ServiceModule } from './service-module.js'
import payments from './payments/index.js'
import content from './content/index.js'
import live from './live/index.js'
import timeseries from './timeseries/index.js'
import reports from './reports/index.js'
import fanout from './fanout/index.js'
import hostfile from './hostfile/index.js'
import proxy from './proxy/index.js'

/**
 * Every service this build can serve: gateway.yaml's `services:` keys are the fixed services' names, or any name
 * for a block whose `type` selects a service type (`proxy`).
 */
export const serviceModules: readonly ServiceModule[] = [payments, content, live, timeseries, reports, fanout, hostfile, proxy]
