import t from 'tap'
import { createScopeGrants } from '../../src/oauth/scope-grant.js'
import { buildOauthConfig, CONTENT_SCOPES, PAYMENT_SCOPES } from '../helpers/oauth-config.js'

const config = await buildOauthConfig()
const mixed = config.service_accounts.find((a) => a.client_id === 'mixed')!

t.test('a request naming no scope gets the remembered grant of its account until the account or the scope definitions change', async (t) => {
  const grant = createScopeGrants()
  const first = grant(undefined, mixed, config)
  t.same(first, [...CONTENT_SCOPES, ...PAYMENT_SCOPES])
  t.equal(grant(undefined, mixed, config), first, 'the same array again')
  t.same(grant('engage:circulars.view', mixed, config), ['engage:circulars.view'], 'a named scope is decided as ever')
  const { [PAYMENT_SCOPES[0]!]: _dropped, ...fewer } = config.scopes
  t.same(grant(undefined, mixed, { ...config, scopes: fewer }), [...CONTENT_SCOPES, ...PAYMENT_SCOPES.slice(1)], 'a reload removing a scope definition')
  const narrowed = { ...mixed, scopes: CONTENT_SCOPES }
  t.same(grant(undefined, narrowed, config), CONTENT_SCOPES, 'a reload narrowing the account')
})

t.test('a refusal is not remembered', async (t) => {
  const grant = createScopeGrants()
  const none = { ...mixed, scopes: [] }
  t.throws(() => grant(undefined, none, config), { code: 'invalid_scope', message: 'No scope is allowed to this client.' })
  t.throws(() => grant(undefined, none, config), { code: 'invalid_scope', message: 'No scope is allowed to this client.' })
})
