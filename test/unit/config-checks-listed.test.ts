import { existsSync, readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

// docs/configuration.md, "Every check, and where it lives": the table a maintainer reads to find a check.
const page = readFileSync(repoPath('docs/configuration.md'), 'utf8')
const section = page.slice(page.indexOf('**Every check, and where it lives.**'), page.indexOf('- **Once at start.**'))
const named = [...section.matchAll(/`((?:src|plugins)\/[^`]+\.ts)`/g)].map((m) => m[1] as string)

/** Whether a module declares a `check` of its own (a policy's or a service's cross-field check). */
function hasOwnCheck (file: string): boolean {
  return /^ {2}check ?\(|^ {2}check:/m.test(readFileSync(file, 'utf8'))
}

t.test('every file the table names exists', async (t) => {
  t.ok(named.length > 10, `${named.length} files named`)
  t.same(named.filter((file) => !existsSync(repoPath(file))), [])
})

t.test('every policy and service with a check of its own is listed', async (t) => {
  const policies = readdirSync(repoPath('plugins'), { withFileTypes: true }).filter((d) => d.isDirectory())
    .map((d) => `plugins/${d.name}/index.ts`).filter((file) => existsSync(repoPath(file)) && hasOwnCheck(repoPath(file)))
  const services = readdirSync(repoPath('src/services'), { withFileTypes: true }).filter((d) => d.isDirectory())
    .map((d) => `src/services/${d.name}/index.ts`).filter((file) => existsSync(repoPath(file)) && hasOwnCheck(repoPath(file)))
  t.ok(policies.length > 0 && services.length > 0, 'the scan finds checks (it can fail)')
  t.same([...policies, ...services].filter((file) => !named.includes(file)), [])
})
