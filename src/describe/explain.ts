import FindMyWay from 'find-my-way'
import { gatewaySettings } from '../config/gateway-settings.js'
import { buildIndexes, type ConfigIndexes } from '../config/indexes.js'
import type { GatewayConfig } from '../config/types.js'
import type { Explanation } from '../plugin/policy.js'
import type { Catalog } from '../pipeline/registry.js'
import type { Principal } from '../runtime/request-context.js'
import { declaredRoutes, moduleForService } from '../services/service-module.js'
import { alsoServed, servedPath, servedRoutes, type ServedRoute } from './route-table.js'
import { explainUpstream, type UpstreamVerdict } from './explain-upstream.js'

/** One chain step's verdict; `not-explained` for an outside policy without `explain`, `not-reached` after a refusal. */
export interface StepVerdict {
  readonly policy: string
  readonly outcome: Explanation['outcome'] | 'not-explained' | 'not-reached'
  readonly status?: number
  readonly code?: string
  readonly note: string
}

/** What `lanegate explain` prints. */
export interface ExplainResult {
  readonly method: string
  readonly path: string
  /** The matched route, or undefined when the router answers 404/405 itself. */
  readonly route?: { service: string, route: string, envelope: string, params: Record<string, string> }
  readonly caller?: { tokenType: string, clientId: string, organizationId: string, scopes: string[], subject?: string, issuer?: string }
  readonly steps: readonly StepVerdict[]
  /** `refuse`: a step (or the router) refuses for sure; `depends`: nothing refuses for sure but something may; `pass`. */
  readonly result: { outcome: 'pass' | 'refuse' | 'depends', at?: string, status?: number, code?: string }
  /** Where a proxy or live route would send it (the split's group and why); absent for other routes and refusals. */
  readonly upstream?: UpstreamVerdict
}

/** Who the explanation is for: a service account of the config, or a user token's subject, organization and scopes. */
export type ExplainCaller =
  | { kind: 'client', clientId: string }
  | { kind: 'user', subject: string, organizationId: string, scopes: readonly string[] }
  | { kind: 'none' }
  /** The caller a pasted token gave (`principalOfToken`): shown with its subject and issuer. */
  | { kind: 'token', principal: Principal }

/** A router entry: a served route, or one a service declares but gateway.yaml does not list (mounted; answers 404). */
type Matched = { row: ServedRoute, unlisted?: undefined } | { row?: undefined, unlisted: { service: string, routeId: string, envelope: string } }

/**
 * Matches `method path` with fastify's own router (find-my-way, with the options app.ts gives fastify) against every
 * served route, then asks each chain step's `explain` what it would do for `caller`. Nothing is sent and no store,
 * counter or key is touched.
 */
export function explainRequest (config: GatewayConfig, catalog: Catalog, method: string, rawPath: string, caller: ExplainCaller, headers: Readonly<Record<string, string>> = {}): ExplainResult {
  const indexes = buildIndexes(config)
  const principal = principalOf(config, indexes, caller)
  const path = rawPath.split('?')[0] ?? ''
  const rows = servedRoutes(config, catalog)
  const router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 200 })
  for (const row of rows) {
    const methods = new Set(row.methods)
    if (methods.has('GET')) methods.add('HEAD') // fastify exposes HEAD for every GET route
    router.on([...methods] as FindMyWay.HTTPMethod[], row.path, () => {}, { row } satisfies Matched)
    const other = row.declaration === undefined ? undefined : alsoServed(row.path, row.declaration.url)
    if (other !== undefined) router.on([...methods] as FindMyWay.HTTPMethod[], other, () => {}, { row } satisfies Matched)
  }
  // app.ts mounts every declared route (so a path's other methods answer 405); an unlisted one answers 404.
  for (const [service, settings] of Object.entries(config.services)) {
    const module = moduleForService(catalog.services, service, settings)
    for (const declaration of module === undefined ? [] : declaredRoutes(module, settings)) {
      if (settings.routes[declaration.id] !== undefined) continue
      const methods = new Set([declaration.method].flat())
      if (methods.has('GET')) methods.add('HEAD')
      const unlisted = { service, routeId: declaration.id, envelope: settings.envelope }
      const served = servedPath(settings.prefix.replace(/\/+$/, ''), declaration.url)
      for (const spelling of [served, alsoServed(served, declaration.url)]) {
        if (spelling !== undefined) router.on([...methods] as FindMyWay.HTTPMethod[], spelling, () => {}, { unlisted } satisfies Matched)
      }
    }
  }
  const shown = principal && { tokenType: principal.tokenType, clientId: principal.clientId, organizationId: principal.organizationId, scopes: [...principal.scopes] }
  const base = { method, path, caller: shown && (caller.kind === 'token' ? { ...shown, subject: principal.subject, issuer: principal.issuer } : shown) }
  const found = router.find(method as FindMyWay.HTTPMethod, path)
  if (found === null) {
    const others = (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const).filter((m) => m !== method && router.find(m, path) !== null)
    const status = others.length > 0 ? 405 : 404
    const code = others.length > 0 ? 'method_not_allowed' : 'not_found'
    const note = others.length > 0 ? `${path} serves ${others.join(', ')} only` : 'no route serves this path'
    return { ...base, steps: [{ policy: '(router)', outcome: 'refuse', status, code, note }], result: { outcome: 'refuse', at: '(router)', status, code } }
  }
  const matched = found.store as Matched
  if (matched.unlisted !== undefined) {
    const { service, routeId, envelope } = matched.unlisted
    const note = `route ${service}/${routeId} is not listed under services.${service}.routes: not served`
    return { ...base, route: { service, route: routeId, envelope, params: {} }, steps: [{ policy: '(router)', outcome: 'refuse', status: 404, code: 'not_found', note }], result: { outcome: 'refuse', at: '(router)', status: 404, code: 'not_found' } }
  }
  const row = matched.row
  const params = Object.fromEntries(Object.entries(found.params).filter((e): e is [string, string] => typeof e[1] === 'string'))
  const route = { service: row.service, route: row.routeId, envelope: row.envelope, params }
  const chain = explainChain({ config, row, method, path, params, caller: principal })
  // A refused request goes nowhere: only a request the chain lets through has a target group to name.
  if (chain.result.outcome === 'refuse') return { ...base, route, ...chain }
  return { ...base, route, ...chain, upstream: explainUpstream(config, indexes, row, { params, principal, headers }) }
}

/** What `explainChain` reasons about: one served route, a request to it, and the caller a valid token gives. */
export interface ChainQuestion {
  readonly config: GatewayConfig
  readonly row: ServedRoute
  readonly method: string
  readonly path: string
  readonly params: Readonly<Record<string, string>>
  readonly caller: Principal | undefined
  /** Explain for any values of the path parameters (`params` empty): steps that read one answer `depends`. */
  readonly anyParams?: boolean
}

/** Asks each step of `row`'s chain what it would do, in chain order; the steps after a refusal are not reached. */
export function explainChain (q: ChainQuestion): Pick<ExplainResult, 'steps' | 'result'> {
  if (q.row.chain.length === 0) return { steps: [], result: { outcome: 'pass' } }
  const steps: StepVerdict[] = []
  let authenticated = false
  let refusedAt: StepVerdict | undefined
  const settings = gatewaySettings(q.config)
  for (const link of q.row.chain) {
    if (refusedAt !== undefined) {
      steps.push({ policy: link.policy, outcome: 'not-reached', note: `not reached (${refusedAt.policy} refuses)` })
      continue
    }
    const explain = link.plugin?.explain
    if (explain === undefined) {
      steps.push({ policy: link.policy, outcome: 'not-explained', note: `policy ${link.policy} has no explain: what it does is unknown here` })
      continue
    }
    const verdict = explain.call(link.plugin, link.options, {
      settings, service: q.row.service, routeId: q.row.routeId, method: q.method, path: q.path,
      params: q.params, caller: q.caller, authenticated, anyParams: q.anyParams,
    })
    const step: StepVerdict = { policy: link.policy, ...verdict }
    steps.push(step)
    if ((link.policy === 'auth' || link.plugin?.provides?.includes('auth') === true) && verdict.outcome === 'pass') authenticated = true
    if (verdict.outcome === 'refuse') refusedAt = step
  }
  if (refusedAt !== undefined) return { steps, result: { outcome: 'refuse', at: refusedAt.policy, status: refusedAt.status, code: refusedAt.code } }
  const uncertain = steps.some((s) => s.outcome === 'depends' || s.outcome === 'not-explained')
  return { steps, result: { outcome: uncertain ? 'depends' : 'pass' } }
}

/** The principal a valid token of this caller would give `auth` (a service token asks for all the account's scopes). */
export function principalOf (config: GatewayConfig, indexes: ConfigIndexes, caller: ExplainCaller): Principal | undefined {
  if (caller.kind === 'none') return undefined
  if (caller.kind === 'token') return caller.principal
  if (caller.kind === 'user') {
    return { tokenType: 'user', subject: caller.subject, clientId: caller.subject, organizationId: caller.organizationId, scopes: new Set(caller.scopes), tokenId: '', expiresAt: 0, issuer: '' }
  }
  const account = indexes.accounts.get(caller.clientId)
  if (account === undefined) throw new UnknownClientError(caller.clientId, config)
  return {
    tokenType: 'service',
    subject: account.client_id,
    clientId: account.client_id,
    organizationId: account.organization,
    scopes: new Set(account.scopes),
    tokenId: '',
    expiresAt: 0,
    issuer: config.issuer.issuer,
  }
}

/** `--client` names no service account of the config. */
export class UnknownClientError extends Error {
  constructor (clientId: string, config: GatewayConfig) {
    super(`unknown client "${clientId}" (service accounts: ${config.service_accounts.map((a) => a.client_id).join(', ')})`)
    this.name = 'UnknownClientError'
  }
}

/** The human form of an explanation. */
export function formatExplanation (result: ExplainResult): string {
  const lines: string[] = []
  const target = result.route === undefined ? '(no route)' : `${result.route.service}/${result.route.route} (envelope ${result.route.envelope})`
  lines.push(`${result.method} ${result.path} → ${target}`)
  if (result.route !== undefined && Object.keys(result.route.params).length > 0) {
    lines.push(`params: ${Object.entries(result.route.params).map(([k, v]) => `${k}=${v}`).join(', ')}`)
  }
  lines.push(result.caller === undefined
    ? 'caller: none (no bearer token)'
    : `caller: ${result.caller.clientId} (${result.caller.tokenType} token, organization ${result.caller.organizationId}, scopes ${result.caller.scopes.join(' ') || '(none)'}${result.caller.subject === undefined ? '' : `, subject ${result.caller.subject}, issuer ${result.caller.issuer ?? ''}`})`)
  const width = Math.max(0, ...result.steps.map((s) => s.policy.length))
  result.steps.forEach((s, i) => {
    const answer = s.status === undefined ? '' : ` ${s.status} ${s.code ?? ''}`
    lines.push(`  ${i + 1}. ${s.policy.padEnd(width)}  ${s.outcome}${s.outcome === 'refuse' || s.outcome === 'depends' ? answer : ''} — ${s.note}`)
  })
  const r = result.result
  lines.push(r.outcome === 'refuse'
    ? `result: refused at ${r.at ?? '?'} with ${r.status ?? '?'} ${r.code ?? '?'}`
    : r.outcome === 'depends'
      ? `result: passes unless ${result.steps.filter((s) => s.outcome === 'depends' || s.outcome === 'not-explained').map((s) => s.outcome === 'depends' ? `${s.policy} refuses (${s.status ?? '?'} ${s.code ?? '?'})` : `${s.policy} (not explained) refuses`).join(' or ')}; then the handler answers`
      : `result: passes${result.route !== undefined && result.steps.length === 0 ? ' (gateway endpoint, no policy chain)' : '; the handler answers'}`)
  const upstream = r.outcome === 'refuse' ? undefined : result.upstream
  if (upstream !== undefined) lines.push(`upstream: ${upstream.upstream} (group ${upstream.group}: ${upstream.reason})`)
  if (upstream?.mirror !== undefined) lines.push(`mirror: a copy of ${upstream.mirror.percent} % of these requests to ${upstream.mirror.upstream}, its answer discarded`)
  return lines.join('\n')
}
