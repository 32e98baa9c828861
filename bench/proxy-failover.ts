import type { LoadJob, LoadResult } from './load-job.js'
import type { BenchOptions } from './options.js'
import type { LoadWorker } from './processes.js'
import type { ScenarioResult } from './result-types.js'
import type { RunLog } from './run-scenario.js'
import type { ScenarioPlan } from './scenarios.js'
import type { ServerSet } from './servers.js'

/** Failed GETs of a run: anything but a 200, connection errors and timeouts. */
export function failedRequests (result: LoadResult): number {
  return result.errors + result.timeouts + result.requests - (result.statusCounts['200'] ?? 0)
}

/**
 * The proxy-service scenario's extra checks, after its rounds (issue 13): how the proxied requests spread over the
 * two equal targets (each bench lane counts what reached it through the proxy), then one target killed while a
 * run is going (`during`: a failure is allowed until the target is ejected; the retry on the other target usually
 * hides even those), then a run that must see no failed GET at all (`after`).
 */
export async function proxyServiceChecks (result: ScenarioResult, plan: ScenarioPlan, servers: ServerSet, worker: LoadWorker,
  options: BenchOptions, log: RunLog): Promise<void> {
  const split: Array<{ target: string, requests: number }> = []
  for (const instance of ['lane', 'lane-b'] as const) {
    const lane = await servers.lane(instance)
    const counts = await (await fetch(`${lane.url}/__bench/counts`)).json() as { proxied: number }
    split.push({ target: instance, requests: counts.proxied })
  }
  result.split = split

  const subject = plan.variants.find((v) => v.role === 'subject')
  if (subject === undefined) return
  const job: LoadJob = { ...subject.request, connections: plan.connections, duration: options.durationSeconds, serverPid: subject.server.pid }
  const running = worker.run(job)
  // lane-b stops (SIGTERM: its open connections are closed) a quarter into the run.
  await new Promise((resolve) => setTimeout(resolve, options.durationSeconds * 250))
  await servers.stop('lane-b')
  const during = await running
  const after = await worker.run(job)
  log.progress(`[proxy-service] lane-b killed mid-run: ${failedRequests(during)} failed of ${during.requests}; the run after: ${failedRequests(after)} failed of ${after.requests}`)
  result.failover = { during, after }
}
