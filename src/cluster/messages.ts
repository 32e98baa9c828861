/**
 * The messages between the primary and its workers (`server.workers` > 1), over node:cluster's IPC channel.
 * Each carries a `channel` that no other sender uses (rate-limiter-flexible's cluster limiter shares the channel
 * with its own `rate_limiter_flexible` messages).
 */

/** Worker → primary: count one request of a route limit (`rate_limits` entry) for `key`. */
export interface CountRequest {
  channel: 'lanegate:count'
  id: number
  limit: string
  points: number
  windowSeconds: number
  key: string
}

/** Primary → worker: the outcome of the count with the same `id`. */
export interface CountReply {
  channel: 'lanegate:count'
  id: number
  allowed: boolean
  remaining: number
  msBeforeReset: number
}

/** Primary → worker: re-read the config file now (SIGHUP to the primary, or the primary saw the file change). */
export interface ReloadCommand { channel: 'lanegate:reload' }

/** Primary → worker: drain and exit, as on SIGTERM. */
export interface ShutdownCommand { channel: 'lanegate:shutdown' }

export type PrimaryMessage = CountReply | ReloadCommand | ShutdownCommand

export function isMessage<T extends { channel: string }> (value: unknown, channel: T['channel']): value is T {
  return typeof value === 'object' && value !== null && (value as { channel?: unknown }).channel === channel
}
