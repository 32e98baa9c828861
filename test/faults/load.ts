import { Agent, request } from 'node:http'

/** One request of a load: what to send, and (optionally) what to do with its answer. */
export interface LoadRequest {
  /** Label of the request kind, e.g. `create` or `healthy`. */
  kind: string
  method: string
  url: string
  headers?: Record<string, string>
  body?: string
}

export interface Answered {
  kind: string
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  ms: number
}

/** Answers by kind and status (`-1`: no answer, the connection failed). */
export type StatusCounts = Record<string, Record<string, number>>

export interface LoadResult {
  sent: number
  counts: StatusCounts
  /** The slowest answer, ms. */
  maxMs: number
}

/**
 * A steady closed-loop load: `concurrency` loops, each sending its next request as soon as the previous one is
 * answered (keep-alive connections), until `stop()` is called. `next(loop)` picks each request (it may wait, e.g.
 * for a restarted gateway, as a client behind a load balancer would); `seen` sees each answer. Not autocannon: the
 * fault cases need per-request Idempotency-Keys and every answer's body to count what was lost or duplicated.
 */
export function steadyLoad (concurrency: number, next: (loop: number) => LoadRequest | Promise<LoadRequest>, seen?: (answer: Answered, sent: LoadRequest) => void): { stop: () => Promise<LoadResult> } {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const counts: StatusCounts = {}
  let sent = 0
  let maxMs = 0
  let running = true
  function once (req: LoadRequest): Promise<Answered> {
    const started = Date.now()
    return new Promise((resolve) => {
      const r = request(req.url, { method: req.method, headers: req.headers, agent }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => { body += d })
        res.on('end', () => resolve({ kind: req.kind, status: res.statusCode ?? 0, headers: res.headers, body, ms: Date.now() - started }))
        res.on('error', () => resolve({ kind: req.kind, status: -1, headers: {}, body, ms: Date.now() - started }))
      })
      r.on('error', () => resolve({ kind: req.kind, status: -1, headers: {}, body: '', ms: Date.now() - started }))
      r.end(req.body)
    })
  }
  async function loop (index: number): Promise<void> {
    while (running) {
      const req = await next(index)
      if (!running) break
      sent += 1
      const answer = await once(req)
      maxMs = Math.max(maxMs, answer.ms)
      const byKind = counts[req.kind] ??= {}
      byKind[String(answer.status)] = (byKind[String(answer.status)] ?? 0) + 1
      seen?.(answer, req)
      // A client's back-off, not a wait: a refused connection (the gateway restarting) is retried after a pause, as
      // clients behind a load balancer do, instead of spinning.
      if (answer.status === -1) await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const loops = Array.from({ length: concurrency }, (_, i) => loop(i))
  return {
    stop: async () => {
      running = false
      await Promise.all(loops)
      agent.destroy()
      return { sent, counts, maxMs }
    },
  }
}

/** `{ "201": 10, "503": 3 }` over every kind. */
export function totalByStatus (counts: StatusCounts): Record<string, number> {
  const total: Record<string, number> = {}
  for (const byStatus of Object.values(counts)) {
    for (const [status, n] of Object.entries(byStatus)) total[status] = (total[status] ?? 0) + n
  }
  return total
}
