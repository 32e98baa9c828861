import { decodeJwt } from 'jose'
import type { GatewayConfig } from '../config/types.js'
import { GatewayError } from '../plugin/gateway-error.js'
import type { Catalog } from '../pipeline/registry.js'
import type { Principal } from '../runtime/request-context.js'
import { explainChain, type ExplainResult } from './explain.js'
import { servedRoutes } from './route-table.js'

/** Whether one method of one route admits the caller (`explain`'s verdict for any values of its path parameters). */
export interface RouteAdmission {
  readonly method: string
  readonly path: string
  readonly service: string
  readonly route: string
  readonly outcome: ExplainResult['result']['outcome']
  /** The step that refuses, with the answer a request would get. */
  readonly at?: string
  readonly status?: number
  readonly code?: string
  /** Why it refuses, or what it depends on; absent when it passes. */
  readonly note?: string
}

/** What lanegate makes of a token it verified: who verified it, the caller it maps to, its lifetime, its routes. */
export interface TokenReport {
  readonly verified: true
  readonly issuer: string
  readonly principal: { subject: string, client_id: string, organization: string, scopes: string[], token_type: string }
  readonly lifetime: { issued_at: string | null, expires_at: string | null, expires_in_seconds: number | null }
  readonly routes: RouteAdmission[]
}

/** A token a request would be refused for: the status and code of that answer, and its description. */
export interface TokenRefusal {
  readonly verified: false
  readonly refusal: { status: number, code: string, description: string | null }
}

/** The report for a verified `principal` of `token` under `config` (the token is read only for its `iat`). */
export function tokenReport (token: string, principal: Principal, config: GatewayConfig, catalog: Catalog, nowMs: number = Date.now()): TokenReport {
  const expires = Number.isFinite(principal.expiresAt) && principal.expiresAt > 0 && principal.expiresAt < 1e11 ? principal.expiresAt : undefined
  const issuedAt = issuedAtOf(token)
  return {
    verified: true,
    issuer: principal.issuer,
    principal: { subject: principal.subject, client_id: principal.clientId, organization: principal.organizationId, scopes: [...principal.scopes], token_type: principal.tokenType },
    lifetime: {
      issued_at: issuedAt === undefined ? null : new Date(issuedAt * 1000).toISOString(),
      expires_at: expires === undefined ? null : new Date(expires * 1000).toISOString(),
      expires_in_seconds: expires === undefined ? null : Math.max(0, Math.floor(expires - nowMs / 1000)),
    },
    routes: routeAdmissions(config, catalog, principal),
  }
}

/**
 * Each method of each route with a policy chain, explained for `caller` (the gateway's own endpoints have none and
 * admit anyone). Path parameters are left open: a step that reads one (organization) says `depends`.
 */
export function routeAdmissions (config: GatewayConfig, catalog: Catalog, caller: Principal): RouteAdmission[] {
  const out: RouteAdmission[] = []
  for (const row of servedRoutes(config, catalog)) {
    if (row.chain.length === 0) continue
    for (const method of row.methods) {
      const { steps, result } = explainChain({ config, row, method, path: row.path, params: {}, caller, anyParams: true })
      const notes = result.outcome === 'refuse'
        ? steps.filter((s) => s.outcome === 'refuse').map((s) => s.note)
        : steps.filter((s) => s.outcome === 'depends' || s.outcome === 'not-explained').map((s) => `${s.policy}: ${s.note}`)
      out.push({
        method, path: row.path, service: row.service, route: row.routeId, outcome: result.outcome,
        ...(result.at === undefined ? {} : { at: result.at, status: result.status, code: result.code }),
        ...(notes.length === 0 ? {} : { note: notes.join('; ') }),
      })
    }
  }
  return out
}

/** The answer a request with this token would get, as data; undefined for an error that is no such answer. */
export function tokenRefusal (error: unknown): TokenRefusal | undefined {
  if (!(error instanceof GatewayError)) return undefined
  const challenge = error.headers['WWW-Authenticate']
  const description = challenge === undefined ? undefined : /error_description="([^"]*)"/.exec(challenge)?.[1]
  return { verified: false, refusal: { status: error.status, code: error.code, description: description ?? null } }
}

/** A JWT's `iat` (already verified by the caller), or undefined for an opaque token. */
function issuedAtOf (token: string): number | undefined {
  try {
    const iat = decodeJwt(token.trim()).iat
    return typeof iat === 'number' && Number.isFinite(iat) ? iat : undefined
  } catch {
    return undefined
  }
}
