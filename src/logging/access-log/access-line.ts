import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ACCESS_LOG_FIELDS, type AccessLogField } from '../../config/access-log-schema.js'
import { redactUrl } from '../logger.js'
import { refusingPolicy } from '../../observability/refusing-policy.js'
import { traceOf } from '../../observability/trace-context.js'
import { answeredErrorOf } from '../../observability/answered-error.js'
import { isoTime } from './iso-time.js'

/** One access line before it is written: every field, `null` where the request has no value for it. */
export type AccessRecord = Record<AccessLogField, string | number | null>

/** The connection's byte counts at the end of its previous request, kept on the socket. */
const COUNTED = Symbol('lanegate.accessBytes')
type CountedSocket = Socket & { [COUNTED]?: { read: number, written: number } }

/**
 * The access record of an answered request. Bytes are the connection's own counts (head and body) since its
 * previous request ended, so they hold for relayed, streamed and chunked answers alike; over HTTP/2 (streams share
 * the connection) `bytes_in` is the request's Content-Length and `bytes_out` is null.
 */
export function accessRecord (request: FastifyRequest, reply: FastifyReply, time: number): AccessRecord {
  const gw = request.gw as FastifyRequest['gw'] | null
  const trace = traceOf(request.raw)
  const bytes = connectionBytes(request)
  const error = answeredErrorOf(request)
  return {
    time: isoTime(time),
    request_id: request.id,
    trace_id: trace.traceId,
    client_ip: request.ip ?? null,
    method: request.method,
    service: gw?.service ?? null,
    route: gw?.routeId ?? null,
    path: redactUrl(request.url),
    status: reply.statusCode,
    bytes_in: bytes.in,
    bytes_out: bytes.out,
    duration_ms: round(reply.elapsedTime),
    upstream: trace.upstream ?? null,
    upstream_ms: trace.upstreamMs === undefined ? null : round(trace.upstreamMs),
    client_id: gw?.principal?.clientId ?? null,
    organization_id: gw?.principal?.organizationId ?? null,
    refused_by: refusingPolicy(gw),
    limit: error?.limit ?? null,
    error: error?.code ?? null,
  }
}

/** The record as one JSON line with the `fields` asked for (all when undefined), in the documented order. */
export function accessLine (record: AccessRecord, fields: readonly AccessLogField[] | undefined): string {
  if (fields === undefined) return `${JSON.stringify(record)}\n`
  const picked: Partial<AccessRecord> = {}
  for (const field of fields) picked[field] = record[field]
  return `${JSON.stringify(picked)}\n`
}

/** `fields` as configured, put in the documented order (a line's keys never depend on how the list was written). */
export function orderedFields (fields: readonly AccessLogField[] | undefined): readonly AccessLogField[] | undefined {
  return fields === undefined ? undefined : ACCESS_LOG_FIELDS.filter((field) => fields.includes(field))
}

function connectionBytes (request: FastifyRequest): { in: number | null, out: number | null } {
  const raw = request.raw
  if (raw.httpVersionMajor === 2) {
    const length = Number(raw.headers['content-length'] ?? 0)
    return { in: Number.isFinite(length) ? length : null, out: null }
  }
  const socket = raw.socket as CountedSocket | null
  if (socket === null || typeof socket.bytesRead !== 'number' || typeof socket.bytesWritten !== 'number') return { in: null, out: null }
  const before = socket[COUNTED] ?? { read: 0, written: 0 }
  const now = { read: socket.bytesRead, written: socket.bytesWritten }
  socket[COUNTED] = now
  return { in: now.read - before.read, out: now.written - before.written }
}

/** Milliseconds to the microsecond. */
function round (ms: number): number {
  return Math.round(ms * 1000) / 1000
}
