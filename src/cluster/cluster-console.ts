import type { GatewayConfig } from '../config/types.js'
import type { ConsoleSource } from '../console/console-routes.js'
import { ViewQueryError } from '../console/process-views.js'
import { TOKEN_VIEW } from '../console/worker-console.js'
import { secretsOf } from '../secrets/redact.js'
import { shapeView } from '../console/shape-views.js'
import { LATENCY_BUCKETS } from '../observability/metrics.js'
import { askWorkers } from './ask-workers.js'
import { primaryLimitKeys } from './primary-counters.js'
import type { ClusterReadiness } from './cluster-readiness.js'
import type { WorkerRoster } from './worker-roster.js'

interface ClientsView {
  limits: Array<{ limit: string, points: number, window_seconds: number, keys: unknown[] | null }>
}

/** With the memory driver the primary counts every worker's route limits: their keys come from here. */
function withPrimaryKeys (view: ClientsView): ClientsView {
  return {
    ...view,
    limits: view.limits.map((limit) => {
      if (limit.keys !== null) return limit
      const keys = primaryLimitKeys(limit.limit, limit.points, limit.window_seconds, 10)
      return keys === undefined ? limit : { ...limit, keys: keys.map((k) => ({ key: k.key, used: k.used, remaining: k.remaining, reset_seconds: Math.ceil(k.msBeforeReset / 1000) })) }
    }),
  }
}

/** How long a console view waits for the workers (the page asks again a second later anyway). */
const CONSOLE_ANSWER_MS = 2_000

/**
 * The console of the primary with `server.workers` > 1: each view asks every serving worker for its raw answer
 * (already redacted by the worker) and merges them as /metrics does — counters summed, target states combined,
 * the overview's readiness the primary's own verdict over its workers. A worker that does not answer in time is
 * left out of that answer.
 */
export function clusterConsoleSource (config: GatewayConfig, roster: WorkerRoster, readiness: ClusterReadiness): ConsoleSource {
  const tokenEnv = config.admin === false ? undefined : config.admin?.auth?.token_env
  const secrets = secretsOf(config, tokenEnv === undefined ? [] : [process.env[tokenEnv] ?? ''])
  return {
    async view (view, query) {
      const answers = await askWorkers(roster.serving(), 'console', CONSOLE_ANSWER_MS, { view, query: { ...query } })
      const raws = answers.filter((a) => a.answered && a.value !== undefined && a.value !== null).map((a) => a.value)
      const refused = raws.find((raw): raw is { refused: string } => typeof (raw as { refused?: unknown }).refused === 'string')
      if (refused !== undefined) throw new ViewQueryError(refused.refused)
      if (raws.length === 0) throw new ViewQueryError('no worker answered (starting or restarting); try again')
      const report = view === 'overview' ? await readiness.report() : undefined
      const shaped = shapeView(view, raws, { bounds: LATENCY_BUCKETS, readiness: report, workers: roster.serving().length })
      return view === 'clients' && config.rate_limit_store.driver === 'memory' ? withPrimaryKeys(shaped as ClientsView) : shaped
    },
    async token (token) {
      // One worker checks it (every worker verifies alike); the token crosses IPC only, never a log.
      const [answer] = await askWorkers(roster.serving().slice(0, 1), 'console', CONSOLE_ANSWER_MS, { view: TOKEN_VIEW, query: { token } })
      if (answer?.answered !== true || answer.value === undefined || answer.value === null) throw new ViewQueryError('no worker answered (starting or restarting); try again')
      return answer.value
    },
    secrets: () => secrets,
  }
}
