import type { FastifyRequest } from 'fastify'
import { recordMirror } from '../../observability/recorders.js'
import { backgroundTrace, traceOf } from '../../observability/trace-context.js'
import { bodyPhaseOf, type BodyPhase } from '../../plugin/body-phase.js'
import { callUpstream, type CallInput } from '../../upstream/call.js'
import { upstreamRequestHeaders } from '../../upstream/headers.js'
import { h2StreamOf, hasBody } from '../../upstream/request-body.js'
import type { UpstreamRegistry } from '../../upstream/registry.js'
import type { UpstreamSettings } from '../../upstream/settings.js'
import type { GroupPlan } from './groups.js'
import { proxiedPath } from './proxy-path.js'
import type { MirrorSettings } from './mirror-settings.js'

/** Copies being read or sent per mirror setting (a block's, or a route's own), in this process: `max_in_flight`. */
const inFlight = new WeakMap<MirrorSettings, number>()

/** Where a copy goes: the mirror group (its registry key, settings and `strip_prefix`), below the block's prefix. */
export interface MirrorTarget {
  readonly upstreams: UpstreamRegistry<UpstreamSettings>
  readonly group: GroupPlan
  readonly rawUrl: string
  readonly prefix: string
}

/**
 * Copies `percent` % of a block's requests to the mirror group, never on the caller's path: the copy's body is
 * read beside the relay (a 'data' listener added in the same tick as the relay's pipe, so both see every chunk)
 * and sent once the caller's body has ended; nothing awaits it and its answer is discarded unread. A body over
 * `max_body_bytes`, or a copy beyond `max_in_flight`, is not sent and is counted as dropped. A policy's body phase
 * (a replaced body, method or path) applies to the copy as to the request it copies.
 */
export function mirrorRequest (request: FastifyRequest, service: string, mirror: MirrorSettings, relayLimit: number, target: MirrorTarget): void {
  if (Math.random() * 100 >= mirror.percent) return
  const req = request.raw
  const phase = bodyPhaseOf(request)
  const replaced = phase?.requestBody
  // A body the relay itself refuses (413) is not copied either.
  const limit = Math.min(mirror.max_body_bytes, relayLimit)
  if (Number(req.headers['content-length'] ?? 0) > limit || (replaced?.length ?? 0) > limit) {
    recordMirror(service, 'dropped_body_too_large')
    return
  }
  const busy = inFlight.get(mirror) ?? 0
  if (busy >= mirror.max_in_flight) {
    recordMirror(service, 'dropped_in_flight')
    return
  }
  inFlight.set(mirror, busy + 1)
  const release = (): void => { inFlight.set(mirror, (inFlight.get(mirror) ?? 1) - 1) }
  const copy = { request, service, target, phase, release }
  if (replaced !== undefined || !hasBody(req.headers, h2StreamOf(req))) {
    setImmediate(() => { send(copy, replaced ?? Buffer.alloc(0)) })
    return
  }
  readBeside(copy, limit)
}

interface Copy {
  readonly request: FastifyRequest
  readonly service: string
  readonly target: MirrorTarget
  readonly phase: BodyPhase | undefined
  readonly release: () => void
}

/** Collects the caller's body as the relay streams it; sends the copy at its end, drops it when too large. */
function readBeside (copy: Copy, limit: number): void {
  const req = copy.request.raw
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
    copy.release()
    recordMirror(copy.service, 'dropped_body_too_large')
  }
  function onEnd (): void {
    const body = Buffer.concat(chunks)
    stop()
    send(copy, body)
  }
  req.on('data', onData)
  req.once('end', onEnd)
  // A caller that went away before the end of its body: nothing to copy.
  req.once('close', () => {
    if (done) return
    stop()
    copy.release()
  })
}

function send ({ request, service, target, phase, release }: Copy, body: Buffer): void {
  recordMirror(service, 'sent')
  const headers: Record<string, string> = {}
  const incoming = upstreamRequestHeaders(request.raw.headers, { host: '', clientIp: request.ip, requestId: String(request.id) })
  for (const name in incoming) {
    const value = incoming[name]
    if (name !== 'host' && name !== 'content-length' && value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  // The copy says it is one: a backend may log or discard it differently.
  headers['x-lanegate-mirror'] = '1'
  const { group } = target
  const { timeouts } = group.settings
  callUpstream(target.upstreams.get(group.key, group.settings), {
    method: (phase?.requestMethod ?? request.raw.method ?? 'GET') as CallInput['method'],
    path: phase?.requestPath ?? proxiedPath(target.rawUrl, target.prefix, group.config.strip_prefix),
    headers,
    body: body.length === 0 ? undefined : body,
    timeoutMs: timeouts.connect_ms + timeouts.response_ms + timeouts.body_idle_ms,
    maxBodyBytes: 0,
    maxErrorBodyBytes: 0,
    copy: true,
    // A child of the caller's span, but nothing told back to the caller's access line (its upstream is its own).
    trace: backgroundTrace(traceOf(request.raw)),
  }).then(release, release)
}
