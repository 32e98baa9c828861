import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway, type SpawnedGateway } from '../helpers/spawn-gateway.js'

/**
 * docs/plugins.md's "Outside this repository", end to end: `npm pack` makes the package, an empty project installs
 * the tarball, a TypeScript policy is compiled there against `lanegate/plugin` (types from the tarball), and the
 * tarball's own `lanegate start` runs it. The same project imports `lanegate/client` (docs/client.md).
 *
 * Offline when it can be: the install first tries `--offline` (npm's cache), then `--prefer-offline` (the registry
 * only for what the cache lacks). Install scripts are not run: better-sqlite3's native binary is copied from this
 * checkout (same version, pinned in the install), so the test never builds or downloads it.
 */
const run = promisify(execFile)
const HASH = '$scrypt$ln=15,r=8,p=1$OkLffbHby4aOyVk43lqjbw$+vKJ3tlYmuYoe3DRP2rDXKz21gCtClj+y0AKee1E54g'

const PLUGIN_TS = `import { definePolicy, Type, type ResponseHead } from 'lanegate/plugin'

const schema = Type.Object({
  closed: Type.Array(Type.String(), { description: 'Store channels refused.', default: [] }),
  stamp: Type.String({ description: 'The X-Store-Channel-Policy value on every answer.', default: 'checked' }),
}, { additionalProperties: false, description: 'Which channels are closed.' })

export default definePolicy({
  name: 'store-channel',
  description: 'Refuses closed store channels and stamps every answer of the route.',
  schema,
  errors: { channel_closed: { status: 403, message: 'This store channel is closed.' } },
  create (options, context) {
    const closed = new Set(options.closed)
    const stamp = (head: ResponseHead): void => { head.setHeader('X-Store-Channel-Policy', options.stamp) }
    return function storeChannelStep (request, reply) {
      context.onResponseHead(reply, stamp)
      const channel = request.headers['x-store-channel']
      if (typeof channel === 'string' && closed.has(channel)) return context.refuse('channel_closed', { fields: { channel } })
    }
  },
})
`

// The plugin's own test, on lanegate/plugin/testing as the tarball exports it: one refused request, printed.
const HARNESS_TS = `import { testPolicy } from 'lanegate/plugin/testing'
import storeChannel from './store-channel.js'

const harness = await testPolicy(storeChannel, { closed: ['kiosk'] }, { envelope: 'exchange' })
const res = await harness.inject({ url: '/test', headers: { 'x-store-channel': 'kiosk' } })
console.log(JSON.stringify({ status: res.statusCode, body: res.json(), stamp: res.headers['x-store-channel-policy'] }))
await harness.close()
`

const TSCONFIG = JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, rootDir: 'src', outDir: 'dist', skipLibCheck: true },
  include: ['src'],
})

const gatewayYaml = (dataDir: string): string => `
plugins:
  - ./dist/store-channel.js
server: { data_dir: ${dataDir} }
admin: { port: 0 }
issuer: { issuer: http://localhost:8080 }
scopes:
  engage:content.view: { description: Read published content }
organizations:
  - id: org_hq_demo
service_accounts:
  - { client_id: demo-content, organization: org_hq_demo, scopes: [engage:content.view], secrets: [ { created: "2026-11-01", hash: "${HASH}" } ] }
services:
  content:
    prefix: /public/v1
    envelope: plain
    policies:
      - store-channel: { closed: [kiosk] }
      - auth: {}
    routes:
      content_list:
        - scope: { all: [engage:content.view] }
    source_dir: ${repoPath('content')}
`

// Packing, installing ~180 packages and compiling take a while on a loaded machine: more than tap's default.
t.setTimeout(300_000)

let dir: string
let project: string
let gateway: SpawnedGateway
let token: string

/** `npm install` in the project: from the cache alone if it can, else with the registry for what it lacks. */
async function npmInstall (args: string[]): Promise<void> {
  const common = ['install', ...args, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']
  try {
    await run('npm', [...common, '--offline'], { cwd: project })
  } catch {
    await run('npm', [...common, '--prefer-offline'], { cwd: project })
  }
}

t.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lanegate-packed-'))
  project = join(dir, 'project')
  await mkdir(join(project, 'src'), { recursive: true })
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })

  // The tests run from the build `npm test` has just made (the three tsc runs of `prepare`), so the pack skips
  // `prepare` rather than building a second time; the declarations of lanegate/plugin must be among it.
  const declarations = repoPath('dist/src/plugin/index.d.ts')
  await readFile(declarations).catch(() => { throw new Error(`${declarations} is missing: run \`npx tsc -p tsconfig.plugin.json\` (npm test does) first`) })
  const packed = JSON.parse((await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir, '--loglevel=error'], { cwd: repoPath(), maxBuffer: 16 * 1024 * 1024 })).stdout) as [{ filename: string }]
  const tarball = join(dir, packed[0].filename)

  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'outside-plugin', private: true, type: 'module' }))
  const sqlite = JSON.parse(await readFile(repoPath('node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }
  await npmInstall([tarball, `better-sqlite3@${sqlite.version}`])
  const native = 'node_modules/better-sqlite3/build/Release'
  await mkdir(join(project, native), { recursive: true })
  await copyFile(repoPath(native, 'better_sqlite3.node'), join(project, native, 'better_sqlite3.node'))

  await writeFile(join(project, 'tsconfig.json'), TSCONFIG)
  await writeFile(join(project, 'src', 'store-channel.ts'), PLUGIN_TS)
  await writeFile(join(project, 'src', 'store-channel-check.ts'), HARNESS_TS)
  await run(process.execPath, [repoPath('node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: project })
  await writeFile(join(project, 'gateway.yaml'), gatewayYaml(join(project, 'data')))

  gateway = await spawnGateway({ bin: join(project, 'node_modules/lanegate/bin/lanegate.js'), config: join(project, 'gateway.yaml'), cwd: project, admin: false })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
  })
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'demo-content', client_secret: 'demo-content-secret' })
  token = ((await (await fetch(`${gateway.base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string }).access_token
})

t.test('the installed gateway is the tarball\'s, not this checkout\'s', async (t) => {
  t.match(gateway.child.spawnargs.join(' '), join(project, 'node_modules/lanegate/bin/lanegate.js'))
})

t.test('the compiled outside plugin lets a request through and its head hook stamps the answer', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { authorization: `Bearer ${token}`, 'x-store-channel': 'pos' } })
  t.equal(res.status, 200)
  t.ok(Array.isArray(((await res.json()) as { data?: unknown }).data), 'the content list answered')
  t.equal(res.headers.get('x-store-channel-policy'), 'checked')
})

t.test('the plugin refuses with its own code in the route\'s envelope, stamped too', async (t) => {
  const res = await fetch(`${gateway.base}/public/v1/content`, { headers: { authorization: `Bearer ${token}`, 'x-store-channel': 'kiosk' } })
  t.same({ status: res.status, body: await res.json(), stamp: res.headers.get('x-store-channel-policy') }, {
    status: 403,
    body: { error: 'channel_closed', channel: 'kiosk', message: 'This store channel is closed.' },
    stamp: 'checked',
  })
})

t.test('the plugin\'s own test compiles and runs on lanegate/plugin/testing from the tarball', async (t) => {
  const { stdout } = await run(process.execPath, [join(project, 'dist', 'store-channel-check.js')], { cwd: project })
  t.same(JSON.parse(stdout), {
    status: 403,
    body: { error: 'channel_closed', channel: 'kiosk', message: 'This store channel is closed.' },
    stamp: 'checked',
  })
})

t.test('lanegate/client imports from the installed tarball', async (t) => {
  const program = 'const m = await import("lanegate/client"); console.log(JSON.stringify(Object.keys(m).sort()))'
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], { cwd: project })
  t.same(JSON.parse(stdout), [
    'LanegateClient', 'LanegateError', 'LanegateNetworkError', 'TokenSource', 'backoffMs', 'codeOfAnswer', 'defaultPrefixes',
    'isLanegateError', 'isLanegateErrorCode', 'lanegateErrorCodes', 'systemClock',
  ])
})
