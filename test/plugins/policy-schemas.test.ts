import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import { readdirSync, statSync } from 'node:fs'
import Ajv from 'ajv'
import { policyPlugins } from '../../src/pipeline/registry.js'
import organization from '../../plugins/organization/index.js'
import { repoPath } from '../helpers/paths.js'
import { tokenEnv } from '../helpers/token-app.js'

// As the loader validates options: defaults filled in.
const ajv = new Ajv.default({ strict: true, allErrors: true, useDefaults: true })
const validate = (name: string, options: unknown) => ajv.validate(policyPlugins.get(name)?.schema as object, options)

t.test('every plugin folder is registered under its folder name', async (tt) => {
  const folders = readdirSync(repoPath('plugins')).filter((f) => statSync(repoPath('plugins', f)).isDirectory()).sort()
  tt.same([...policyPlugins.keys()].sort(), folders)
  for (const [key, plugin] of policyPlugins) tt.equal(plugin.name, key)
})

t.test('every schema compiles in ajv strict mode and describes every property', async (tt) => {
  function walk (schema: Record<string, unknown>, path: string): void {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
    for (const [name, property] of Object.entries(properties)) {
      tt.type(property.description, 'string', `${path}/${name} has a description`)
      walk(property, `${path}/${name}`)
    }
    if (typeof schema.items === 'object' && schema.items !== null) walk(schema.items as Record<string, unknown>, `${path}/items`)
  }
  for (const [name, plugin] of policyPlugins) {
    tt.doesNotThrow(() => ajv.compile(plugin.schema), name)
    tt.type(plugin.schema.description, 'string', name)
    walk(plugin.schema, name)
  }
})

t.test('option schemas accept the documented shapes and reject others', async (tt) => {
  const cases: Array<[string, unknown, boolean]> = [
    ['auth', {}, true],
    ['auth', { realm: 'payments' }, true],
    ['auth', { realm: 'x"y\n' }, false],
    ['auth', { token_types: ['service'] }, false],
    ['token-type', { allow: ['service'] }, true],
    ['token-type', { allow: ['service', 'user'] }, true],
    ['token-type', { allow: [] }, false],
    ['token-type', { allow: ['admin'] }, false],
    ['token-type', {}, false],
    ['scope', { all: ['commerce:payment-intents.read'] }, true],
    ['scope', { any: ['a', 'b'] }, true],
    ['scope', {}, false],
    ['scope', { all: [] }, false],
    ['scope', { all: ['two words'] }, false],
    ['organization', { param: 'store_org_id', not_found: true }, true],
    ['organization', { query: 'organization_id' }, true],
    ['organization', { param: 'x', extra: 1 }, false],
    ['rate-limit', { limit: 'payments' }, true],
    ['rate-limit', {}, false],
    ['rate-limit', { limit: 'payments', points: 5 }, false],
  ]
  for (const [name, options, ok] of cases) tt.equal(validate(name, options), ok, `${name} ${JSON.stringify(options)}`)
})

t.test('organization check() wants exactly one of param and query', async (tt) => {
  const env = await tokenEnv()
  tt.same(organization.check?.({ not_found: false, param: 'a', query: 'b' }, gatewaySettings(env.config)), [{ path: '', message: 'set exactly one of param and query' }])
  tt.same(organization.check?.({ not_found: false }, gatewaySettings(env.config)), [{ path: '', message: 'set exactly one of param and query' }])
  tt.same(organization.check?.({ not_found: false, query: 'organization_id' }, gatewaySettings(env.config)), [])
})
