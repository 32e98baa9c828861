import type { ConsoleSources } from './console-sources.js'
import { startConsoleState } from './console-state.js'
import { consoleSecrets } from './process-console.js'
import { processView, VIEWS, ViewQueryError, type ViewName, type ViewQuery } from './process-views.js'
import { redactedJson } from '../secrets/redact.js'
import { tokenView } from './token-view.js'

/** The question a primary asks one worker with a pasted token in `query.token` (not a view of the page). */
export const TOKEN_VIEW = 'token'

/** A worker's answer when the view's query was refused (the primary answers 400 with the message). */
export interface WorkerViewRefusal { refused: string }

/**
 * A worker's side of the console with `server.workers` > 1: its raw view (process-views.ts), redacted here
 * already (the worker knows its config's secrets), for the primary to merge with the other workers'. Undefined
 * with `admin: false`. The worker samples its own counters once a second, as one process does.
 */
export function workerConsole (booted: ConsoleSources): ((view: string, query: ViewQuery) => Promise<unknown>) | undefined {
  if (booted.metrics === undefined) return undefined
  const state = startConsoleState(booted.metrics)
  return async function answerView (view, query) {
    if (view === TOKEN_VIEW) return await tokenView(booted, query.token ?? '')
    if (!VIEWS.includes(view as ViewName)) return undefined
    try {
      const raw = await processView(booted, state, view as ViewName, query)
      return JSON.parse(redactedJson(raw, consoleSecrets(booted))) as unknown
    } catch (error) {
      if (error instanceof ViewQueryError) return { refused: error.message } satisfies WorkerViewRefusal
      throw error
    }
  }
}
