import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError } from '../../src/config/config-error.js'
import { parseGatewayConfig } from '../../src/config/second-pass/load-gateway-config.js'
import { repoPath } from '../helpers/paths.js'

/** A folder with gateway.yaml's plugin modules, removed after the test file. */
const dir = await mkdtemp(join(tmpdir(), 'lanegate-plugins-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

const plugin = (name: string, extra = ''): string => `export default {
  name: '${name}',
  description: 'test policy ${name}',
  schema: { type: 'object', additionalProperties: false, properties: { level: { type: 'integer', minimum: 1, default: 3 } } },
  ${extra}
  create: (options, context) => () => undefined,
}
`
await writeFile(join(dir, 'good.mjs'), plugin('good-policy', "errors: { good_refused: { status: 403, message: 'No.' } },"))
await writeFile(join(dir, 'twin.mjs'), plugin('twin', "errors: { good_refused: { status: 409, message: 'Also no.' } },"))
await writeFile(join(dir, 'clash-name.mjs'), plugin('auth'))
await writeFile(join(dir, 'clash-code.mjs'), plugin('clash-code', "errors: { forbidden: { status: 403, message: 'Mine.' } },"))
await writeFile(join(dir, 'clash-built-in-code.mjs'), plugin('my-ip-filter', "errors: { ip_not_allowed: { status: 403, message: 'Mine.' } },"))
await writeFile(join(dir, 'not-a-policy.mjs'), 'export default { name: "x" }\n')
await writeFile(join(dir, 'throws.mjs'), 'throw new Error("boom at import")\n')

const config = (plugins: string[], chain = '[]'): string => `plugins:
${plugins.map((p) => `  - ${p}`).join('\n')}
issuer: { issuer: https://auth.test }
scopes: { a:read: { description: read } }
services:
  content:
    prefix: /c
    envelope: plain
    source_dir: ${repoPath('content')}
    routes:
      content_list: ${chain}
`

async function problems (text: string): Promise<{ path: string, line?: number, message: string }[]> {
  try {
    await parseGatewayConfig(text, join(dir, 'gateway.yaml'), { env: {} })
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => ({ ...p }))
    throw error
  }
  return []
}

t.test('a plugin named by a path relative to the config file loads, runs its schema defaults, and is usable in a chain', async (t) => {
  const loaded = await parseGatewayConfig(config(['./good.mjs'], '[ { good-policy: {} } ]'), join(dir, 'gateway.yaml'), { env: {} })
  t.same(loaded.config.services.content?.routes.content_list, [{ 'good-policy': { level: 3 } }])
  t.equal(loaded.catalog.outside.get('good-policy'), './good.mjs')
  t.ok(Object.isFrozen(loaded.config.services.content?.routes), 'the validated config is frozen')
})

t.test('a plugin that fails to load is an error at its plugins entry, with the line', async (t) => {
  const found = await problems(config(['./missing.mjs', './throws.mjs']))
  t.equal(found.length, 2)
  t.match(found[0], { path: 'plugins[0]', line: 2, message: /^cannot load policy plugin "\.\/missing\.mjs": / })
  t.same(found[1], { path: 'plugins[1]', line: 3, message: 'cannot load policy plugin "./throws.mjs": boom at import' })
})

t.test('a default export that is not a policy is an error', async (t) => {
  t.same(await problems(config(['./not-a-policy.mjs'])), [
    { path: 'plugins[0]', line: 2, message: '"./not-a-policy.mjs" is not a policy plugin: `description` must be a non-empty string' },
  ])
})

t.test('a plugin name that clashes with a built-in policy is an error', async (t) => {
  t.same(await problems(config(['./clash-name.mjs'])), [
    { path: 'plugins[0]', line: 2, message: 'policy name "auth" is already taken by a built-in policy' },
  ])
})

t.test('an error code that clashes with the catalogue or with another plugin is an error', async (t) => {
  t.same(await problems(config(['./good.mjs', './twin.mjs', './clash-code.mjs'])), [
    { path: 'plugins[1]', line: 3, message: 'error code "good_refused" of policy "twin" is already declared by policy "good-policy"' },
    { path: 'plugins[2]', line: 4, message: 'error code "forbidden" of policy "clash-code" is already declared by the error catalogue' },
  ])
})

t.test('an error code a built-in policy declares (ip-restriction\'s ip_not_allowed) is taken too', async (t) => {
  t.same(await problems(config(['./good.mjs', './clash-built-in-code.mjs'])), [
    { path: 'plugins[1]', line: 3, message: 'error code "ip_not_allowed" of policy "my-ip-filter" is already declared by built-in policy "ip-restriction"' },
  ])
})

t.test('options the plugin\'s schema refuses are an error at their YAML path and line', async (t) => {
  t.same(await problems(config(['./good.mjs'], '\n        - good-policy: { level: 0 }')), [
    { path: 'services.content.routes.content_list[0].good-policy.level', line: 12, message: 'must be >= 1' },
  ])
})
