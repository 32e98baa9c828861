import type { ScenarioId } from './scenario-ids.js'

/**
 * Which scenarios `--instructions` counts: those whose every server is one process, spoken to in plain HTTP, one
 * request after another (their plans are the timed modes' own, see scenarios.ts).
 */
export const INSTRUCTION_SCENARIOS: readonly ScenarioId[] = ['auth-get', 'auth-get-redis', 'external-auth', 'live-proxy', 'proxy-service', 'proxy-mirror', 'transform', 'cache', 'token', 'flood-429']

/** Why scenario `id` is not counted in instructions, or undefined when it is. */
export function instructionsUnsupported (id: ScenarioId): string | undefined {
  if (INSTRUCTION_SCENARIOS.includes(id)) return undefined
  switch (id) {
    case 'workers': return 'its gateways fork workers, and callgrind would have to follow each child'
    case 'tls': return 'its requests are HTTPS, one of its variants a handshake per request'
    case 'latency-c1': return 'it measures latency; its servers and requests are live-proxy\'s, count that one'
    case 'memory': return 'it measures memory'
    case 'websocket': return 'its messages are not requests'
    case 'config-push': return 'it measures how fast a pushed config is applied, not requests'
    default: return 'it is not counted in instructions'
  }
}
