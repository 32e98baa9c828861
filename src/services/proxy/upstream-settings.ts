import type { UpstreamSettings } from '../../upstream/settings.js'
import type { ProxyUpstreamConfig } from './settings.js'

/** What a proxy's upstream is called in messages (`The upstream service answered 503.`); never its address. */
export const PROXY_LABEL = 'The upstream service'

/**
 * The engine's settings for one validated (frozen) `upstream:` block, derived once per block: a snapshot keeps the
 * same object, so the shared registry sees the same settings object on every request and reconciles only when a
 * reload hands a new block. Targets are normalised to `{url, weight}`.
 */
const derived = new WeakMap<ProxyUpstreamConfig, UpstreamSettings>()

export function proxyUpstreamSettings (upstream: ProxyUpstreamConfig): UpstreamSettings {
  let settings = derived.get(upstream)
  if (settings === undefined) {
    settings = {
      targets: upstream.targets.map((target) => typeof target === 'string' ? { url: target, weight: 1 } : { url: target.url, weight: target.weight }),
      balance: upstream.balance,
      max_sockets: upstream.max_sockets,
      timeouts: upstream.timeouts,
      retry: upstream.retry,
      health: upstream.health,
      credential: upstream.credential,
      label: PROXY_LABEL,
      tls: upstream.tls,
      circuit_breaker: upstream.circuit_breaker,
      outlier_ejection: upstream.outlier_ejection,
    }
    derived.set(upstream, settings)
  }
  return settings
}

/** A target's URL as given, for the checks (duplicates, parse errors). */
export function targetUrl (target: ProxyUpstreamConfig['targets'][number]): string {
  return typeof target === 'string' ? target : target.url
}
