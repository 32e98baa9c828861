import type { GatewayMetrics } from '../observability/metrics.js'
import type { Readiness } from '../observability/readiness.js'
import { isMessage, type AdminAnswer, type AdminQuery } from '../ipc/messages.js'

/** What a worker answers the primary's admin listener from. */
export interface WorkerAdminSources {
  /** The worker's metrics; undefined with `admin: false` (then the primary serves no admin listener either). */
  metrics: GatewayMetrics | undefined
  readiness: Readiness
  /** The worker's raw answer for a console view (the primary merges the workers'); undefined without a console. */
  console?: (view: string, query: Record<string, string | undefined>) => Promise<unknown>
}

/**
 * The worker's side of the admin listener with `server.workers` > 1: the primary alone listens on the admin
 * port and asks each worker over IPC for its registry (prom-client's JSON, summed by the primary) or its
 * readiness report. Nothing here runs per request: the registry is read only when the primary scrapes. Returns
 * a function that stops answering.
 */
export function answerPrimaryAdmin (sources: WorkerAdminSources): () => void {
  function onMessage (message: unknown): void {
    if (!isMessage<AdminQuery>(message, 'lanegate:admin')) return
    void produce(sources, message).then((value) => {
      const answer: AdminAnswer = { channel: 'lanegate:admin', id: message.id, value }
      // A failed send (the primary is gone) needs no handling: the primary counts an unanswered worker itself.
      if (process.connected) process.send?.(answer, ignoreSendError)
    })
  }
  process.on('message', onMessage)
  return () => { process.off('message', onMessage) }
}

function ignoreSendError (): void {}

/** The answer's value, or undefined when producing it failed (the primary then treats the worker as silent). */
async function produce (sources: WorkerAdminSources, { what, view, query }: AdminQuery): Promise<unknown> {
  try {
    if (what === 'readiness') return await sources.readiness.report()
    if (what === 'console') return await sources.console?.(view ?? '', query ?? {})
    return await sources.metrics?.registry.getMetricsAsJSON()
  } catch {
    return undefined
  }
}
