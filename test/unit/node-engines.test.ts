import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

interface Installed { name: string, version: string, node: string }

/** Every installed package (nested and scoped ones too) that declares `engines.node`. */
function installedEngines (dir: string, out: Installed[] = []): Installed[] {
  if (!existsSync(dir)) return out
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue
    const path = join(dir, entry)
    if (entry.startsWith('@')) { installedEngines(path, out); continue }
    const manifest = join(path, 'package.json')
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string, version: string, engines?: { node?: string } }
      if (typeof pkg.engines?.node === 'string') out.push({ name: pkg.name, version: pkg.version, node: pkg.engines.node })
    }
    installedEngines(join(path, 'node_modules'), out)
  }
  return out
}

const own = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { engines: { node: string } }
const oldest = semver.minVersion(own.engines.node)

// What `npm ci` warns about (EBADENGINE) is a package whose engines.node the running Node does not satisfy. The
// README promises the oldest Node our own `engines` admits; every package of the tree must accept that one too.
t.test('every installed package accepts this Node and the oldest Node package.json admits (no EBADENGINE)', async (t) => {
  const packages = installedEngines(repoPath('node_modules'))
  t.ok(packages.length > 50, `${packages.length} packages declare engines.node`)
  t.ok(oldest !== null, `engines.node "${own.engines.node}" has a minimum`)
  const refusing = packages.filter((p) => !semver.satisfies(process.version, p.node) || !semver.satisfies(oldest!, p.node))
  t.same(refusing.map((p) => `${p.name}@${p.version} wants node ${p.node}`), [], `on ${process.version} and ${oldest?.version}`)
})

t.test('the README states the same minimum Node as package.json', async (t) => {
  const readme = readFileSync(repoPath('README.md'), 'utf8')
  t.match(readme, new RegExp(`Requires Node\\.js ${oldest!.major}\\.${oldest!.minor}\\+`))
})

// The override of package.json (light-my-request → cookie 1.x, which runs on Node 20) must keep app.inject's
// cookie support working: that is what light-my-request uses cookie for.
t.test('app.inject still sends cookies with the overridden cookie package', async (t) => {
  const { default: Fastify } = await import('fastify')
  const app = Fastify()
  app.get('/', async (request) => ({ cookie: request.headers.cookie }))
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/', cookies: { a: '1', b: 'two words' } })
  t.same(res.json(), { cookie: 'a=1; b=two%20words' })
})
