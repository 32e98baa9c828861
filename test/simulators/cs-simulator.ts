import { createHash } from 'node:crypto'
import http from 'node:http'
import type { Socket } from 'node:net'

export const DEPARTMENTS = ['bakery', 'dairy', 'deli', 'grocery', 'produce'] as const

/** `ok`, `stall` (never answer), or `{kind:'fail', status, body?}` (that status and body, JSON by default). */
export type CsMode = 'ok' | 'stall' | { kind: 'fail', status: number, body?: string }

export interface CsQueryBody {
  metric: string
  stores: string[]
  from: string
  to: string
  granularity: 'hour' | 'day' | 'week' | 'month'
  group_by?: 'department'
}

export interface CsSimulator {
  url: string
  port: number
  /** Query bodies received, in order. */
  queries: CsQueryBody[]
  setMode (mode: CsMode): void
  close (): Promise<void>
}

const SCALE: Record<CsQueryBody['granularity'], number> = { hour: 1 / 24, day: 1, week: 7, month: 30 }

/**
 * The synthetic value of one bucket: seeded by store id, metric, bucket start (and department), so every run
 * and every test computes the same numbers. `sales_total` has cents; counts are integers.
 */
export function syntheticValue (store: string, metric: string, ts: string, granularity: CsQueryBody['granularity'], department?: string): number {
  const digest = createHash('sha256').update(`${store}|${metric}|${ts}|${department ?? ''}`).digest()
  const unit = digest.readUInt32BE(0) / 0xffffffff
  const scale = SCALE[granularity] / (department === undefined ? 1 : DEPARTMENTS.length)
  switch (metric) {
    case 'sales_total': return Math.round((500 + unit * 4500) * scale * 100) / 100
    case 'transactions': return Math.round((20 + unit * 280) * scale)
    default: return Math.round((50 + unit * 850) * scale)
  }
}

/** Bucket starts in [from, to): UTC hours, days, Mondays or first days of months. */
export function buckets (from: Date, to: Date, granularity: CsQueryBody['granularity']): string[] {
  const at = new Date(from)
  at.setUTCMinutes(0, 0, 0)
  if (granularity !== 'hour') at.setUTCHours(0)
  if (granularity === 'week') at.setUTCDate(at.getUTCDate() - ((at.getUTCDay() + 6) % 7))
  if (granularity === 'month') at.setUTCDate(1)
  const out: string[] = []
  while (at < to) {
    out.push(at.toISOString().replace('.000Z', 'Z'))
    if (granularity === 'hour') at.setUTCHours(at.getUTCHours() + 1)
    else if (granularity === 'day') at.setUTCDate(at.getUTCDate() + 1)
    else if (granularity === 'week') at.setUTCDate(at.getUTCDate() + 7)
    else at.setUTCMonth(at.getUTCMonth() + 1)
  }
  return out
}

/** The answer the simulator gives to a query (exported so tests compute expected results the same way). */
export function answerQuery (query: CsQueryBody): { series: { store_org_id: string, department?: string, points: { ts: string, value: number }[] }[] } {
  const ts = buckets(new Date(query.from), new Date(query.to), query.granularity)
  const series = query.stores.flatMap((store) => {
    const departments = query.group_by === 'department' ? [...DEPARTMENTS] : [undefined]
    return departments.map((department) => ({
      store_org_id: store,
      ...(department === undefined ? {} : { department }),
      points: ts.map((t) => ({ ts: t, value: syntheticValue(store, query.metric, t, query.granularity, department) })),
    }))
  })
  return { series }
}

/**
 * A stream-materialization stand-in: `POST /query` (see src/services/timeseries/cs-client.ts for the protocol)
 * answers deterministic synthetic data; 400 for a malformed query; modes for failures.
 */
export async function startCsSimulator (options: { port?: number, host?: string } = {}): Promise<CsSimulator> {
  const queries: CsQueryBody[] = []
  const sockets = new Set<Socket>()
  let mode: CsMode = 'ok'
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/query')) return send(res, 404, { error: 'not found' })
      let query: CsQueryBody
      try {
        query = JSON.parse(Buffer.concat(chunks).toString('utf8')) as CsQueryBody
      } catch {
        return send(res, 400, { error: 'body is not JSON' })
      }
      queries.push(query)
      if (mode === 'stall') return
      if (typeof mode === 'object') {
        res.writeHead(mode.status, { 'content-type': 'application/json' })
        res.end(mode.body ?? JSON.stringify({ error: `simulated ${mode.status}` }))
        return
      }
      if (!Array.isArray(query.stores) || typeof query.metric !== 'string' || Number.isNaN(Date.parse(query.from)) ||
        Number.isNaN(Date.parse(query.to)) || !(query.granularity in SCALE)) {
        return send(res, 400, { error: 'malformed query' })
      }
      send(res, 200, answerQuery(query))
    })
  })
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)) })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    queries,
    setMode (next) { mode = next },
    close () {
      for (const s of sockets) s.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function send (res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}
