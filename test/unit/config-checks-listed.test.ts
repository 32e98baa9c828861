import { existsSync, readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

// docs/configuration.md, "Every check, and where it lives": the table a maintainer reads to find a check.
const page = readFileSync(repoPath('docs/configuration.md'), 'utf8')
const from = page.indexOf('**Every check, and where it lives.**')
const to = page.indexOf('- **Once at start.**')
const section = page.slice(from, to)
const named = [...section.matchAll(/`((?:src|plugins)\/[^`]+\.ts)`/g)].map((m) => m[1] as string)

/** Whether a module declares a `check` of its own (a policy's or a service's cross-field check). */
function hasOwnCheck (file: string): boolean {
  return /^ {2}check ?\(|^ {2}check:/m.test(readFileSync(file, 'utf8'))
}

/** Every file of src/config/ (both passes) whose name says it checks: `*checks*.ts`, `*rules*.ts`. */
function checkFiles (dir: string): string[] {
  return readdirSync(repoPath(dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return checkFiles(path)
    return /(?:checks|rules)\.ts$/.test(entry.name) ? [path] : []
  })
}

t.test('the table is where the test reads it', async (t) => {
  t.ok(from !== -1 && to > from, 'both markers found, in order')
})

t.test('every check file of src/config/ is listed', async (t) => {
  const files = checkFiles('src/config')
  t.ok(files.length >= 5, `${files.length} check files found (the scan can fail)`)
  t.same(files.filter((file) => !named.includes(file)), [])
})

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
