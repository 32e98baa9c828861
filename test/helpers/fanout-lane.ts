import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A minimal lane for fan-out tests (the shared lane simulator may replace it): `POST /fanout/:op/preview` →
 * 200 `{ok:true, store_org_id, summary}`; `POST /fanout/:op/apply` applies once per `Idempotency-Key` (a repeat
 * answers the first result with `replayed:true`). Failure modes are switched at run time with `setMode`.
 */
export interface LaneMode {
  /** `ok`; `reject`: 422 with a JSON error; `ok-false`: 200 `{ok:false}`. */
  preview: 'ok' | 'reject' | 'ok-false'
  /**
   * `ok`; `fail`: 503 (the next `failTimes` applies, then ok; Infinity = always); `reject`: 409; `stall`: never
   * answers; `apply-then-stall`: applies the change, then never answers (the caller cannot know it applied).
   */
  apply: 'ok' | 'fail' | 'reject' | 'stall' | 'apply-then-stall'
  failTimes: number
}

export interface LaneRequest {
  path: string
  idempotencyKey: string | undefined
  authorization: string | undefined
  body: Record<string, unknown>
}

export interface StubLane {
  readonly url: string
  readonly requests: LaneRequest[]
  /** Idempotency-Key → times the change was actually applied (must never exceed 1). */
  readonly applied: Map<string, number>
  /**
   * The apply requests that changed something (the first of each Idempotency-Key), in order: a fault case counts
   * them per `dispatch_id` of the body, which also catches a resend under another key.
   */
  readonly changes: LaneRequest[]
  /** Apply requests received, duplicates included. */
  applyCalls (): number
  setMode (mode: Partial<LaneMode>): void
  /**
   * The lane process dies: the listener closes and every open connection is destroyed (answers in flight are
   * lost); what it applied stays applied, as in a lane's own database. `up` listens again on the same port.
   */
  down (): Promise<void>
  up (): Promise<void>
  close (): Promise<void>
}

export async function startStubLane (initial: Partial<LaneMode> = {}, port = 0): Promise<StubLane> {
  let mode: LaneMode = { preview: 'ok', apply: 'ok', failTimes: 0, ...initial }
  let failuresLeft = mode.failTimes
  const requests: LaneRequest[] = []
  const applied = new Map<string, number>()
  const changes: LaneRequest[] = []
  const results = new Map<string, Record<string, unknown>>()
  const stalled = new Set<ServerResponse>()

  // A request cut off mid-body (`down`) is dropped, as by a dying process.
  const server = createServer((req, res) => { handle(req, res).catch(() => { res.destroy() }) })
  async function handle (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>
    const path = req.url ?? ''
    const key = req.headers['idempotency-key'] as string | undefined
    const received: LaneRequest = { path, idempotencyKey: key, authorization: req.headers.authorization, body }
    requests.push(received)
    const send = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
    }
    const match = /^\/fanout\/([^/]+)\/(preview|apply)$/.exec(path)
    if (req.method !== 'POST' || match === null) return send(404, { error: 'no such lane path' })
    const storeOrgId = body.store_org_id
    if (match[2] === 'preview') {
      if (mode.preview === 'reject') return send(422, { error: 'price below cost' })
      if (mode.preview === 'ok-false') return send(200, { ok: false, reason: 'locked' })
      return send(200, { ok: true, store_org_id: storeOrgId, summary: `${match[1]} would change 1 item` })
    }
    if (key === undefined) return send(400, { error: 'Idempotency-Key required' })
    const previous = results.get(key)
    if (previous !== undefined) return send(200, { ...previous, replayed: true })
    if (mode.apply === 'stall') {
      stalled.add(res)
      return
    }
    if (mode.apply === 'reject') return send(409, { error: 'store is closed' })
    if (mode.apply === 'fail' && failuresLeft > 0) {
      failuresLeft--
      return send(503, { error: 'lane busy' })
    }
    applied.set(key, (applied.get(key) ?? 0) + 1)
    changes.push(received)
    const result = { ok: true, store_org_id: storeOrgId, applied: true }
    results.set(key, result)
    if (mode.apply === 'apply-then-stall') {
      stalled.add(res)
      return
    }
    return send(200, result)
  }

  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const address = server.address() as AddressInfo
  const stop = async (): Promise<void> => {
    for (const res of stalled) res.destroy()
    stalled.clear()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    applied,
    changes,
    applyCalls: () => requests.filter((r) => r.path.endsWith('/apply')).length,
    setMode (next) {
      mode = { ...mode, ...next }
      if (next.failTimes !== undefined) failuresLeft = next.failTimes
      if (mode.apply !== 'stall' && mode.apply !== 'apply-then-stall') {
        for (const res of stalled) res.destroy()
        stalled.clear()
      }
    },
    down: stop,
    up: () => new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(address.port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    }),
    close: async () => { if (server.listening) await stop() },
  }
}
