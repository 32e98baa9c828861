/**
 * The messages between the primary and its workers (`server.workers` > 1), over node:cluster's IPC channel.
 * Each carries a `channel` that no other sender uses (rate-limiter-flexible's cluster limiter shares the channel
 * with its own `rate_limiter_flexible` messages).
 */

/** One request of a route limit (`rate_limits` entry) to count for `key`: `[id, limit, points, windowSeconds, key]`. */
export type CountItem = [id: number, limit: string, points: number, windowSeconds: number, key: string]

/** Its outcome: `[id, allowed (1/0), remaining, msBeforeReset]`. */
export type CountOutcomeItem = [id: number, allowed: 0 | 1, remaining: number, msBeforeReset: number]

/**
 * Worker → primary: the counts asked for during one turn of the worker's event loop, sent as one message (an
 * IPC message costs far more than the count itself; tuples keep the JSON small).
 */
export interface CountRequest {
  channel: 'lanegate:count'
  counts: CountItem[]
}

/** Primary → worker: the outcomes of one CountRequest, in its order. */
export interface CountReply {
  channel: 'lanegate:count'
  outcomes: CountOutcomeItem[]
}

/**
 * What a worker's pre-count (`sync_interval_ms` > 0, memory driver) admitted for one key since its last sync:
 * `[limit, points, windowSeconds, key, admitted]`.
 */
export type WindowAddItem = [limit: string, points: number, windowSeconds: number, key: string, admitted: number]

/** Worker → primary: one sync of a pre-counting limit (or one key's first request, `admitted` 1). */
export interface WindowAddRequest {
  channel: 'lanegate:window-add'
  id: number
  adds: WindowAddItem[]
}

/** Primary → worker: each key's window count after the adds, and the milliseconds left in it, in the adds' order. */
export interface WindowAddReply {
  channel: 'lanegate:window-add'
  id: number
  results: [consumed: number, msLeft: number][]
}

/** Prober worker → primary → every other worker: one active probe's result (upstream/probe-sharing.ts). */
export interface ProbeResultMessage {
  channel: 'lanegate:probe'
  url: string
  path: string
  healthy: boolean
}

/**
 * Worker → primary → every other worker: a target's circuit breaker opened (until `until`, ms since the epoch, for
 * `openMs`) or closed in one worker (upstream/breaker-sharing.ts).
 */
export interface CircuitMessage {
  channel: 'lanegate:circuit'
  upstream: string
  url: string
  to: 'open' | 'closed'
  reason: string
  openMs: number
  until: number
}

/** Primary → worker: whether it is the one that runs the active health probes of this host. */
export interface ProberCommand { channel: 'lanegate:prober', probing: boolean }

/** Primary → worker: re-read the config file now (SIGHUP to the primary, or the primary saw the file change). */
export interface ReloadCommand { channel: 'lanegate:reload' }

/** Primary → worker: drain and exit, as on SIGTERM. */
export interface ShutdownCommand { channel: 'lanegate:shutdown' }

/**
 * Primary → worker: the admin listener (served by the primary) asks for this worker's metrics (its registry as
 * prom-client's JSON) or its readiness report. `id` pairs the answer with the question.
 */
export interface AdminQuery {
  channel: 'lanegate:admin'
  id: number
  what: 'metrics' | 'readiness' | 'console'
  /** With `what: 'console'`: the view and its query parameters (the answer is the worker's raw, redacted view). */
  view?: string
  query?: Record<string, string | undefined>
}

/** Worker → primary: the answer to one AdminQuery (`value` is undefined when the worker could not produce it). */
export interface AdminAnswer { channel: 'lanegate:admin', id: number, value: unknown }

/** Worker → primary: take a place for an open connection of `key` (at most `max`), or give one back. */
export interface SlotRequest { channel: 'lanegate:slots', op: 'acquire' | 'release', id: number, key: string, max: number }

/** Primary → worker: whether the `acquire` with this `id` got its place. */
export interface SlotReply { channel: 'lanegate:slots', id: number, allowed: boolean }

export type PrimaryMessage = CountReply | WindowAddReply | ProbeResultMessage | CircuitMessage | ProberCommand | ReloadCommand | ShutdownCommand | AdminQuery | SlotReply

export function isMessage<T extends { channel: string }> (value: unknown, channel: T['channel']): value is T {
  return typeof value === 'object' && value !== null && (value as { channel?: unknown }).channel === channel
}
