import type { ServiceModule } from './service-module.js'
import payments from './payments/index.js'
import content from './content/index.js'
import live from './live/index.js'
import timeseries from './timeseries/index.js'
import reports from './reports/index.js'
import fanout from './fanout/index.js'
import hostfile from './hostfile/index.js'

/** Every service this build can serve; gateway.yaml's `services:` keys must be among these names. */
export const serviceModules: readonly ServiceModule[] = [payments, content, live, timeseries, reports, fanout, hostfile]
