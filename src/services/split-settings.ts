import { Type } from '@sinclair/typebox'
import type { SplitSettings, StickyKey } from '../upstream/split.js'
import type { ServiceSettingProblem } from './service-module.js'

/** A target group's name under `upstreams:` (a weight key, a rule's `upstream`); never integer-like, so key order holds. */
export const GROUP_NAME = '^[a-z][a-z0-9_-]{0,31}$'

function ids (what: string) {
  return Type.Array(Type.String({ minLength: 1 }), { minItems: 1, uniqueItems: true, description: what })
}

const Rule = Type.Object({
  match: Type.Object({
    header: Type.Optional(Type.Object({
      name: Type.String({ pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$', description: 'A request header name (any case).' }),
      values: Type.Array(Type.String(), { minItems: 1, description: 'The rule holds when the header has one of these values (exactly).' }),
    }, { additionalProperties: false, description: 'A header the caller sends (a caller can set it: use it for opt-in testing, not to keep anyone out).' })),
    clients: Type.Optional(ids('Client ids of the caller\'s token.')),
    organizations: Type.Optional(ids('The caller\'s organization id.')),
    stores: Type.Optional(ids('The store the request is for (the store the organization policy resolved; the live proxy\'s store).')),
  }, { additionalProperties: false, description: 'Every condition given must hold.' }),
  upstream: Type.String({ pattern: GROUP_NAME, description: 'The group a matching request goes to.' }),
}, { additionalProperties: false, description: 'One rule: requests it matches go to `upstream`.' })

/** `split:` of a proxy block or route (sticky by default on the client), and of the live service (on the store). */
export function splitSchema (sticky: StickyKey) {
  return Type.Object({
    rules: Type.Array(Rule, { default: [], description: 'Ordered rules; the first that matches picks the group, before any weight.' }),
    weights: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0, maximum: 10000 }), {
      propertyNames: { pattern: GROUP_NAME },
      description: 'Share of each group, laid on 10,000 hash buckets in the order listed: a caller\'s sticky key picks its bucket, so it stays in its group.',
    })),
    sticky: Type.Union([Type.Literal('client'), Type.Literal('organization'), Type.Literal('store')], {
      default: sticky,
      description: 'What is hashed for the weights: the token\'s client id, the caller\'s organization, or the store of the request.',
    }),
    fallback: Type.Optional(Type.String({ pattern: GROUP_NAME, description: 'The group of a request no rule took that has no sticky key (or a split without weights). Default: the first group of `weights`, else the first group.' })),
  }, { additionalProperties: false, description: 'Which target group a request goes to: rules first, then weights by a hash of the sticky key.' })
}

export const SplitSchema = splitSchema('client')

/**
 * What the schema cannot say about a split at `at` whose groups are `groups`: every group it names exists, the
 * weights add up to more than 0, and every rule has a condition.
 */
export function splitProblems (split: SplitSettings, groups: readonly string[], at: string): ServiceSettingProblem[] {
  const problems: ServiceSettingProblem[] = []
  const known = (name: string, path: string): void => {
    if (!groups.includes(name)) problems.push({ path, message: `no upstream group "${name}" (groups: ${groups.join(', ')})` })
  }
  split.rules.forEach((rule, i) => {
    if (Object.keys(rule.match).length === 0) problems.push({ path: `${at}.rules.${i}.match`, message: 'names nothing to match: give header, clients, organizations or stores' })
    known(rule.upstream, `${at}.rules.${i}.upstream`)
  })
  if (split.weights !== undefined) {
    for (const group of Object.keys(split.weights)) known(group, `${at}.weights.${group}`)
    if (Object.values(split.weights).reduce((sum, w) => sum + w, 0) <= 0) problems.push({ path: `${at}.weights`, message: 'the weights must add up to more than 0' })
  }
  if (split.fallback !== undefined) known(split.fallback, `${at}.fallback`)
  if (split.rules.length === 0 && split.weights === undefined) problems.push({ path: at, message: 'chooses nothing: give rules or weights' })
  return problems
}
