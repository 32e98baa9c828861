import type { ConsoleSources } from './console-sources.js'
import type { ConsoleSource } from './console-routes.js'
import type { ConsoleState } from './console-state.js'
import { processView } from './process-views.js'
import { secretsOf } from '../secrets/redact.js'
import { shapeView } from './shape-views.js'
import { tokenView } from './token-view.js'

/** The console of one process serving its own gateway (`server.workers: 1`). */
export function processConsoleSource (booted: ConsoleSources, state: ConsoleState): ConsoleSource {
  return {
    async view (view, query) {
      const raw = await processView(booted, state, view, query)
      return shapeView(view, [raw], { bounds: state.metrics.durations.upperBounds })
    },
    token: (token) => tokenView(booted, token),
    secrets: () => consoleSecrets(booted),
  }
}

/** The current config's secrets, and the admin bearer token when there is one. */
export function consoleSecrets (booted: ConsoleSources): string[] {
  const { config } = booted.gateway.current()
  const tokenEnv = config.admin === false ? undefined : config.admin?.auth?.token_env
  return secretsOf(config, tokenEnv === undefined ? [] : [process.env[tokenEnv] ?? ''])
}
