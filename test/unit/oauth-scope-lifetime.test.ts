import t from 'tap'
import { grantScopes } from '../../src/oauth/scope-grant.js'
import { tokenLifetime } from '../../src/oauth/token-lifetime.js'
import { buildOauthConfig, CONTENT_SCOPES, PAYMENT_SCOPES } from '../helpers/oauth-config.js'

t.test('scope rules', async (t) => {
  const config = await buildOauthConfig()
  const mixed = config.service_accounts.find((a) => a.client_id === 'mixed')!
  t.same(grantScopes(undefined, mixed, config), [...CONTENT_SCOPES, ...PAYMENT_SCOPES], 'omitted → all allowed')
  t.same(grantScopes('', mixed, config), [...CONTENT_SCOPES, ...PAYMENT_SCOPES], 'empty → all allowed')
  t.same(grantScopes('engage:circulars.view', mixed, config), ['engage:circulars.view'], 'subset → exactly it')
  t.same(grantScopes('engage:circulars.view  engage:content.view engage:circulars.view', mixed, config),
    ['engage:circulars.view', 'engage:content.view'], 'duplicates and double spaces are fine')
  t.throws(() => grantScopes('engage:content.create', mixed, config), { code: 'invalid_scope' }, 'exists but not allowed')
  t.throws(() => grantScopes('engage:content.view nope:nothing', mixed, config), { code: 'invalid_scope' }, 'does not exist')
  t.throws(() => grantScopes('toString', mixed, config), { code: 'invalid_scope' }, 'prototype names are not scopes')
})

t.test('an account with no allowed scope cannot get a token', async (t) => {
  const config = await buildOauthConfig()
  const account = { ...config.service_accounts[0]!, scopes: [] }
  t.throws(() => grantScopes(undefined, account, config), { code: 'invalid_scope', message: 'No scope is allowed to this client.' })
})

t.test('lifetime: shortest granted scope entry, else the default', async (t) => {
  const { issuer } = await buildOauthConfig()
  t.equal(tokenLifetime(CONTENT_SCOPES, issuer), 86400)
  t.equal(tokenLifetime(PAYMENT_SCOPES, issuer), 3600)
  t.equal(tokenLifetime([...CONTENT_SCOPES, 'commerce:payment-intents.read'], issuer), 3600)
  t.equal(tokenLifetime(['engage:content.create'], issuer), 1800)
  t.equal(tokenLifetime(['engage:content.create', 'engage:content.view'], issuer), 86400, 'scopes without an entry do not take part')
  t.equal(tokenLifetime(['constructor'], issuer), 1800)
})
