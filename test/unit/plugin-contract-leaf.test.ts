import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

// lanegate/plugin is a leaf: src/plugin/ imports nothing of src/ or plugins/ but its own files. These run the rules
// `npm run depcruise` runs, on the real contract and on a contract that reaches into the gateway.

const require = createRequire(import.meta.url)
const { forbidden } = require(repoPath('.dependency-cruiser.cjs')) as { forbidden: IForbiddenRuleType[] }
const contractRules = forbidden.filter((rule) => rule.name === 'plugin-contract-stands-alone' || rule.name === 'layer-contract-plugin')

/** The violations of the contract's rules, as `rule: from → to`, cruising `files` below `baseDir`. */
async function violations (baseDir: string, files: string[]): Promise<string[]> {
  const result = await cruise(files, {
    baseDir,
    validate: true,
    ruleSet: { forbidden: contractRules },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  }, { extensions: ['.ts', '.js'] })
  const output = result.output as ICruiseResult
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort()
}

t.test('both rules the contract is held to exist', async (t) => {
  t.same(contractRules.map((rule) => rule.name).sort(), ['layer-contract-plugin', 'plugin-contract-stands-alone'])
})

t.test('src/plugin/ imports nothing of the rest of the gateway', async (t) => {
  t.same(await violations(repoPath(), ['src/plugin']), [])
})

t.test('a contract file that imports the config, even for a type, breaks both rules', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-contract-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const files: Record<string, string> = {
    'src/plugin/policy.ts': "import type { GatewayConfig } from '../config/types.js'\nimport type { Own } from './own.js'\nexport type Both = [GatewayConfig, Own]\n",
    'src/plugin/own.ts': 'export interface Own { readonly name: string }\n',
    'src/config/types.ts': 'export interface GatewayConfig { readonly port: number }\n',
  }
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, dirname(path)), { recursive: true })
    await writeFile(join(dir, path), text)
  }
  t.same(await violations(dir, ['src/plugin']), [
    'layer-contract-plugin: src/plugin/policy.ts → src/config/types.ts',
    'plugin-contract-stands-alone: src/plugin/policy.ts → src/config/types.ts',
  ])
})
