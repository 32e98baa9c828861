import type { FastifyRequest } from 'fastify'
import type { Principal } from '../../src/plugin/index.js'
import type { NameChanges } from './schema.js'

const PLACEHOLDER = /\{\{\s*([a-z_]+)\.([A-Za-z0-9_-]+)\s*\}\}/g
const PRINCIPAL_FIELDS: Readonly<Record<string, (principal: Principal) => string>> = {
  subject: (p) => p.subject,
  client_id: (p) => p.clientId,
  organization_id: (p) => p.organizationId,
  token_type: (p) => p.tokenType,
}

/** A value with `{{…}}` placeholders, split once when the chain is built. */
export type Template = (request: FastifyRequest, principal: Principal | undefined) => string | undefined

/** Problems of a template value (unknown placeholders), for `check`. */
export function templateProblems (value: string): string[] {
  const problems: string[] = []
  for (const [, source, name] of value.matchAll(PLACEHOLDER)) {
    if (source === 'principal' && !(name as string in PRINCIPAL_FIELDS)) problems.push(`unknown placeholder {{principal.${name}}} (known: ${Object.keys(PRINCIPAL_FIELDS).join(', ')})`)
    else if (source !== 'principal' && source !== 'params' && source !== 'query') problems.push(`unknown placeholder {{${source}.${name}}} (known sources: principal, params, query)`)
  }
  return problems
}

/** Whether a value reads the principal (the policy then requires `auth` earlier). */
export function usesPrincipal (value: string): boolean {
  return /\{\{\s*principal\./.test(value)
}

/**
 * Compiles a value: a constant costs nothing per request. A placeholder whose value the request lacks (no such
 * parameter, no principal) makes the whole value undefined: the header or parameter is then not set.
 */
export function compileTemplate (value: string): Template {
  const parts = value.split(PLACEHOLDER)
  if (parts.length === 1) return () => value
  return function fillTemplate (request, principal) {
    let out = ''
    for (let i = 0; i < parts.length; i += 3) {
      out += parts[i] as string
      if (i + 2 >= parts.length) break
      const piece = lookup(parts[i + 1] as string, parts[i + 2] as string, request, principal)
      if (piece === undefined) return undefined
      out += piece
    }
    return out
  }
}

function lookup (source: string, name: string, request: FastifyRequest, principal: Principal | undefined): string | undefined {
  if (source === 'principal') return principal === undefined ? undefined : PRINCIPAL_FIELDS[name]?.(principal)
  const from = (source === 'params' ? request.params : request.query) as Record<string, unknown> | undefined
  const found = from?.[name]
  return typeof found === 'string' ? found : Array.isArray(found) && typeof found[0] === 'string' ? found[0] : undefined
}

/** Name changes built once: lower-cased for headers, as given for query parameters. */
export interface CompiledNames {
  rename: ReadonlyArray<readonly [string, string]>
  remove: readonly string[]
  set: ReadonlyArray<readonly [string, Template]>
}

export function compileNames (changes: NameChanges | undefined, lowerCase: boolean): CompiledNames | undefined {
  if (changes === undefined) return undefined
  const name = lowerCase ? (n: string) => n.toLowerCase() : (n: string) => n
  return {
    rename: Object.entries(changes.rename ?? {}).map(([from, to]) => [name(from), name(to)] as const),
    remove: (changes.remove ?? []).map(name),
    set: Object.entries(changes.set ?? {}).map(([n, value]) => [name(n), compileTemplate(value)] as const),
  }
}

/** A header- or parameter-like map the changes are applied to. */
export interface NameTarget {
  get (name: string): string | string[] | undefined
  set (name: string, value: string | string[]): void
  delete (name: string): void
}

export function applyNames (changes: CompiledNames, target: NameTarget, request: FastifyRequest, principal: Principal | undefined): void {
  for (const [from, to] of changes.rename) {
    const value = target.get(from)
    if (value === undefined) continue
    target.delete(from)
    target.set(to, value)
  }
  for (const name of changes.remove) target.delete(name)
  for (const [name, template] of changes.set) {
    const value = template(request, principal)
    if (value !== undefined) target.set(name, value)
  }
}

/** Rewrites the query string of `url` with `changes`; the path is kept byte for byte. */
export function changeQuery (url: string, changes: CompiledNames, request: FastifyRequest, principal: Principal | undefined): string {
  const mark = url.indexOf('?')
  const path = mark === -1 ? url : url.slice(0, mark)
  const params = new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1))
  applyNames(changes, {
    get: (name) => params.has(name) ? params.getAll(name) : undefined,
    set: (name, value) => {
      params.delete(name)
      for (const one of [value].flat()) params.append(name, one)
    },
    delete: (name) => { params.delete(name) },
  }, request, principal)
  const query = params.toString()
  return query === '' ? path : `${path}?${query}`
}
