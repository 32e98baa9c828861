import type { BackendTlsConfig } from '../config/types.js'
import type { CircuitBreakerSettings } from './circuit-breaker.js'
import type { RetryBudgetSettings } from './retry-budget.js'
import type { OutlierEjectionSettings } from './outlier-counts.js'

/**
 * The settings of one upstream: the shape the `proxy` service's `upstream:` block in gateway.yaml takes (targets
 * already normalised to `{url, weight}`, defaults filled in). The lanes, fan-out and timeseries build theirs from
 * their own config (`laneUpstreamSettings`, `singleTargetSettings`).
 */
export interface UpstreamSettings {
  /** Where requests go; at least one. A target's URL may carry a base path, prefixed to every request path. */
  readonly targets: readonly UpstreamTarget[]
  /** `round_robin`: smooth weighted round robin; `least_connections`: fewest requests in flight per weight. */
  readonly balance: BalanceStrategy
  /** Connections per target at most (the target's concurrency cap: a hung target fills only its own). */
  readonly max_sockets: number
  readonly timeouts: UpstreamTimeouts
  /** Idempotent requests retried on another target; `attempts` counts the first one. */
  readonly retry: UpstreamRetry
  readonly health: UpstreamHealth
  /** Sent upstream as `Authorization`; the caller's own Authorization never is. */
  readonly credential?: string
  /** Who answered, in messages (`The lane software`, `The upstream service`); never the target's address. */
  readonly label: string
  /** TLS to https targets: private CA, client certificate, server name, verification (backend-tls.ts). */
  readonly tls?: BackendTlsConfig
  /** A circuit breaker per target (circuit-breaker.ts); none when absent. */
  readonly circuit_breaker?: CircuitBreakerSettings
  /** Targets failing far more than their siblings are ejected a while (outlier-ejection.ts); none when absent. */
  readonly outlier_ejection?: OutlierEjectionSettings
}

export type BalanceStrategy = 'round_robin' | 'least_connections'

export interface UpstreamTarget {
  /** `http(s)://host:port[/base]`. */
  readonly url: string
  /** Share of requests relative to the other targets (round_robin) or connection weight (least_connections). */
  readonly weight: number
}

export interface UpstreamTimeouts {
  /** No TCP (and TLS) connection within this: failure `timeout`. */
  readonly connect_ms: number
  /**
   * No response head within this from the start of the attempt, waiting for a connection included: `timeout`. A
   * request body's upload is not counted: the clock starts again once the body was sent (relay.ts).
   */
  readonly response_ms: number
  /** Once the head arrived (and the request body was sent), a body silent for this long is cut off. */
  readonly body_idle_ms: number
  /** The same for a `text/event-stream` answer (default 300000: events may be minutes apart). */
  readonly stream_idle_ms?: number
}

export interface UpstreamRetry {
  /** Attempts in all, the first included (1 = never retried). Each retry goes to a target not tried yet. */
  readonly attempts: number
  /** Upper-case methods that may be retried; a request with a body never is (its body is already consumed). */
  readonly methods: readonly string[]
  /** Retries sent at most `percent` % of the requests plus `min_per_second` a second (retry-budget.ts); none when absent. */
  readonly budget?: RetryBudgetSettings
}

export interface UpstreamHealth {
  /** `failures` transport failures in a row eject a target for `eject_seconds`; it then returns on probation. */
  readonly passive?: { readonly failures: number, readonly eject_seconds: number }
  /** GET `path` on every target each `interval_seconds`: a probe that fails ejects it until one succeeds. */
  readonly active?: { readonly path: string, readonly interval_seconds: number }
}

/** Retry and health defaults for upstreams that do not configure them (one target, no health checks). */
export const SINGLE_TARGET_DEFAULTS = {
  balance: 'round_robin',
  retry: { attempts: 1, methods: ['GET', 'HEAD', 'OPTIONS'] },
  health: {},
} as const satisfies Pick<UpstreamSettings, 'balance' | 'retry' | 'health'>

/** An upstream with one target and no retry or health checks (a lane, the stream materialization service). */
export function singleTargetSettings (
  url: string,
  options: { label: string, max_sockets: number, timeouts: UpstreamTimeouts, credential?: string, tls?: BackendTlsConfig },
): UpstreamSettings {
  return {
    targets: [{ url, weight: 1 }],
    ...SINGLE_TARGET_DEFAULTS,
    max_sockets: options.max_sockets,
    timeouts: options.timeouts,
    credential: options.credential,
    label: options.label,
    tls: options.tls,
  }
}

/** What changes a target's connection pool: a change here replaces the pools (in-flight requests finish first). */
export function poolFingerprint (settings: UpstreamSettings): string {
  const { timeouts } = settings
  return `${settings.max_sockets}|${timeouts.connect_ms}|${timeouts.response_ms}|${timeouts.body_idle_ms}|${timeouts.stream_idle_ms ?? ''}|${JSON.stringify(settings.tls ?? null)}`
}
