import type { FastifyRequest } from 'fastify'
import { recordMirror } from '../../observability/recorders.js'
import { traceOf } from '../../observability/trace-context.js'
import { responseHooksOf } from '../../plugin/response-phase.js'
import { callUpstream, type CallInput } from '../../upstream/call.js'
import { upstreamRequestHeaders } from '../../upstream/headers.js'
import { h2StreamOf, hasBody } from '../../upstream/request-body.js'
import type { Upstream } from '../../upstream/upstream.js'
import type { MirrorSettings } from './mirror-settings.js'

/** Copies being read or sent, per proxy block, in this process (bounded by `max_in_flight`). */
const inFlight = new Map<string, number>()

/** Where a copy goes: the mirror group's upstream and the path it is sent to (its own `strip_prefix`). */
export interface MirrorTarget {
  readonly upstream: Upstream
  readonly path: string
}

/**
 * Copies `percent` % of a block's requests to the mirror group, never on the caller's path: the copy's body is
 * read beside the relay (a 'data' listener added in the same tick as the relay's pipe, so both see every chunk)
 * and sent once the caller's body has ended; nothing awaits it and its answer or failure is discarded. A body over
 * `max_body_bytes`, or a copy beyond `max_in_flight`, is not sent and is counted as dropped.
 */
export function mirrorRequest (request: FastifyRequest, service: string, mirror: MirrorSettings, relayLimit: number, target: () => MirrorTarget): void {
  if (Math.random() * 100 >= mirror.percent) return
  const req = request.raw
  const replaced = responseHooksOf(request)?.requestBody
  // A body the relay itself refuses (413) is not copied either.
  const limit = Math.min(mirror.max_body_bytes, relayLimit)
  if (Number(req.headers['content-length'] ?? 0) > limit || (replaced?.length ?? 0) > limit) {
    recordMirror(service, 'dropped_body_too_large')
    return
  }
  const busy = inFlight.get(service) ?? 0
  if (busy >= mirror.max_in_flight) {
    recordMirror(service, 'dropped_in_flight')
    return
  }
  inFlight.set(service, busy + 1)
  const release = (): void => { inFlight.set(service, (inFlight.get(service) ?? 1) - 1) }
  if (replaced !== undefined || !hasBody(req.headers, h2StreamOf(req))) {
    setImmediate(() => { send(request, service, target, replaced ?? Buffer.alloc(0), release) })
    return
  }
  readBeside(request, service, limit, target, release)
}

/** Collects the caller's body as the relay streams it; sends the copy at its end, drops it when too large. */
function readBeside (request: FastifyRequest, service: string, limit: number, target: () => MirrorTarget, release: () => void): void {
  const req = request.raw
  const chunks: Buffer[] = []
  let size = 0
  let done = false
  const stop = (): void => {
    done = true
    req.off('data', onData)
    req.off('end', onEnd)
    chunks.length = 0
  }
  function onData (chunk: Buffer): void {
    size += chunk.length
    if (size <= limit) {
      chunks.push(chunk)
      return
    }
    stop()
    release()
    recordMirror(service, 'dropped_body_too_large')
  }
  function onEnd (): void {
    const body = Buffer.concat(chunks)
    stop()
    send(request, service, target, body, release)
  }
  req.on('data', onData)
  req.once('end', onEnd)
  // A caller that went away before the end of its body: nothing to copy.
  req.once('close', () => {
    if (done) return
    stop()
    release()
  })
}

function send (request: FastifyRequest, service: string, targetOf: () => MirrorTarget, body: Buffer, release: () => void): void {
  let target: MirrorTarget
  try {
    target = targetOf()
  } catch {
    // Outside the caller's path: a copy that cannot be addressed is simply not sent.
    release()
    return
  }
  recordMirror(service, 'sent')
  const headers: Record<string, string> = {}
  const incoming = upstreamRequestHeaders(request.raw.headers, { host: '', clientIp: request.ip, requestId: String(request.id) })
  for (const name in incoming) {
    const value = incoming[name]
    if (name !== 'host' && name !== 'content-length' && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  // The copy says it is one: a backend may log or discard it differently.
  headers['x-lanegate-mirror'] = '1'
  const { timeouts } = target.upstream.settings
  const method = (responseHooksOf(request)?.requestMethod ?? request.raw.method ?? 'GET') as CallInput['method']
  callUpstream(target.upstream, {
    method,
    path: target.path,
    headers,
    body: body.length === 0 ? undefined : body,
    timeoutMs: timeouts.connect_ms + timeouts.response_ms + timeouts.body_idle_ms,
    maxBodyBytes: 1048576,
    maxErrorBodyBytes: 0,
    trace: traceOf(request.raw),
  }).then(release, release)
}
