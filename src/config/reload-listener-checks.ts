import { formatPath, type ConfigProblem } from './config-error.js'
import { policyName } from './semantic-checks.js'
import { routePolicies, type GatewayConfig } from './types.js'

/**
 * What a reload may not apply to a listener set up at start. `client-certificate` refuses every request without a
 * certificate the listener verified: on a listener started without `server.tls.client_ca_file` (plain HTTP, or TLS
 * that asks no caller for a certificate) no request ever has one, so applying the policy would answer 401 on every
 * request of its routes until the restart that the new `server` block waits for. The reload is refused instead,
 * naming each place, and the running config stays.
 */
export function listenerReloadProblems (started: GatewayConfig, next: GatewayConfig): ConfigProblem[] {
  if (started.server.tls?.client_ca_file !== undefined) return []
  const problems: ConfigProblem[] = []
  const message = 'the running listener was started without server.tls.client_ca_file, so no caller\'s certificate is ' +
    'asked for or verified: applied now, every request here would be refused 401 client_certificate_required. ' +
    'Reload refused (the running config stays); restart the gateway to apply this file'
  for (const [service, settings] of Object.entries(next.services)) {
    settings.policies.forEach((entry, i) => {
      if (policyName(entry) === 'client-certificate') problems.push({ path: formatPath(['services', service, 'policies', i, 'client-certificate']), message })
    })
    for (const [routeId, routeEntry] of Object.entries(settings.routes)) {
      const at = Array.isArray(routeEntry) ? ['services', service, 'routes', routeId] : ['services', service, 'routes', routeId, 'policies']
      routePolicies(routeEntry).forEach((entry, i) => {
        if (policyName(entry) === 'client-certificate') problems.push({ path: formatPath([...at, i, 'client-certificate']), message })
      })
    }
  }
  return problems
}
