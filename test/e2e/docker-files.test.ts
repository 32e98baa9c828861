import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { clusterEnv, dropSchema, runName, servicesUnavailable, TEST_REDIS_URL } from '../helpers/cluster-config.js'
import { TEST_POSTGRES_URL } from '../helpers/payments-config.js'
import { repoPath } from '../helpers/paths.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'

/**
 * There is no Docker engine in CI, so docker/ is checked statically (issue 15 finding 12): the compose file
 * mounts the cluster config that exists in the repository, over the config path the image starts with, and that
 * config passes the real `lanegate validate`. The same file serves `npm run cluster` (test/e2e/cluster.test.ts).
 */
const COMPOSE = repoPath('docker/compose.yaml')
const CLUSTER = repoPath('docker/gateway.cluster.yaml')

interface ComposeService {
  image?: string
  environment?: Record<string, string>
  secrets?: string[]
  build?: unknown
  volumes?: string[]
  depends_on?: Record<string, { condition?: string }>
  healthcheck?: { test?: unknown }
  restart?: string
}

interface ComposeFile {
  services: Record<string, ComposeService>
  secrets?: Record<string, { environment?: string, file?: string }>
}

function composeFile (): ComposeFile {
  return parse(readFileSync(COMPOSE, 'utf8'), { merge: true }) as ComposeFile
}

function gatewayServices (): Array<[string, ComposeService]> {
  return Object.entries(composeFile().services).filter(([, service]) => service.build !== undefined)
}

/** The admin token a test gives where compose asks the shell for LANEGATE_ADMIN_TOKEN. */
const ADMIN_TOKEN = 'compose-test-admin-token-0123456789'

/**
 * A gateway container's environment as compose would pass it: `${NAME:?message}` (required from the shell) takes
 * the test's value, or fails the test when the test has none for that name.
 */
function composeEnvironment (service: ComposeService, shell: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(service.environment ?? {})) {
    env[name] = String(value).replace(/\$\{([A-Z_]+):\?[^}]*\}/g, (_, variable: string) => {
      const given = shell[variable]
      if (given === undefined) throw new Error(`compose requires ${variable} from the shell; the test gives none`)
      return given
    })
  }
  return env
}

function validate (file: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null, output: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [repoPath('bin/lanegate.js'), 'validate', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.on('error', reject)
    child.on('close', (code) => done({ code, output }))
  })
}

t.test('compose mounts docker/gateway.cluster.yaml, which exists, over the config path the image starts with', async (t) => {
  t.ok(existsSync(COMPOSE), 'docker/compose.yaml exists')
  t.ok(existsSync(CLUSTER), 'docker/gateway.cluster.yaml exists')
  const imageConfig = /CMD \[.*"--config", "([^"]+)"\]/.exec(readFileSync(repoPath('docker/Dockerfile'), 'utf8'))?.[1]
  t.equal(imageConfig, '/app/gateway.yaml', 'the image serves /app/gateway.yaml')
  const gateways = gatewayServices()
  t.same(gateways.map(([name]) => name), ['gateway-1', 'gateway-2'])
  for (const [name, service] of gateways) {
    const configMounts = (service.volumes ?? []).filter((v) => v.split(':')[1] === imageConfig)
    t.equal(configMounts.length, 1, `${name} mounts one file over ${imageConfig}`)
    const source = resolve(dirname(COMPOSE), (configMounts[0] ?? '').split(':')[0] ?? '')
    t.equal(source, CLUSTER, `${name} mounts exactly docker/gateway.cluster.yaml`)
  }
})

t.test('compose waits for healthy dependencies and restarts the gateways', async (t) => {
  for (const [name, service] of gatewayServices()) {
    t.same(service.depends_on, { postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } }, `${name} depends_on`)
    t.equal(service.restart, 'unless-stopped', `${name} restart policy`)
    t.match(JSON.stringify(service.healthcheck?.test), /\/healthz/, `${name} healthcheck`)
  }
  t.match(readFileSync(repoPath('docker/Dockerfile'), 'utf8'), /^HEALTHCHECK .*\n?.*\/healthz/m, 'the image has a HEALTHCHECK on /healthz')
  const ignored = readFileSync(repoPath('.dockerignore'), 'utf8').split('\n').map((line) => line.trim())
  for (const entry of ['data/', 'node_modules/', 'dist/', '*.pem']) t.ok(ignored.includes(entry), `.dockerignore keeps ${entry} out of the build context`)
})

t.test('the cluster config passes `lanegate validate`', async (t) => {
  const res = await validate(CLUSTER)
  t.equal(res.code, 0, res.output)
  t.match(res.output, /gateway\.cluster\.yaml: valid/)
})

t.test('the cluster config passes `lanegate validate` with compose\'s environment (admin listener on 0.0.0.0)', async (t) => {
  for (const [name, service] of gatewayServices()) {
    const env = composeEnvironment(service, { LANEGATE_ADMIN_TOKEN: ADMIN_TOKEN })
    t.equal(env.LANEGATE_ADMIN_HOST, '0.0.0.0', `${name} puts the admin listener on the compose network`)
    const res = await validate(CLUSTER, env)
    t.equal(res.code, 0, `${name}: ${res.output}`)
  }
})

t.test('Prometheus sends the admin token compose gives the gateways', async (t) => {
  const compose = composeFile()
  const prometheus = compose.services.prometheus
  const scrape = (parse(readFileSync(repoPath('docker/prometheus.yml'), 'utf8')) as { scrape_configs: Array<{ authorization?: { type?: string, credentials_file?: string } }> }).scrape_configs
  t.same(prometheus?.secrets, ['lanegate_admin_token'], 'the prometheus service mounts the token secret')
  t.same(compose.secrets?.lanegate_admin_token, { environment: 'LANEGATE_ADMIN_TOKEN' }, 'the secret is the LANEGATE_ADMIN_TOKEN the gateways read')
  t.same(scrape.map((job) => job.authorization), [{ type: 'Bearer', credentials_file: '/run/secrets/lanegate_admin_token' }], 'every scrape job sends it as a bearer token')
  for (const [name, service] of gatewayServices()) {
    t.match(service.environment?.LANEGATE_ADMIN_TOKEN, /^\$\{LANEGATE_ADMIN_TOKEN:\?/, `${name} requires the token from the shell`)
  }
  t.match(readFileSync(CLUSTER, 'utf8'), /^ {2}auth: \{ token_env: LANEGATE_ADMIN_TOKEN \}/m, 'the cluster config reads it as admin.auth.token_env')
})

const skip = await servicesUnavailable()
t.test('a gateway starts with compose\'s environment and its admin listener asks for the token Prometheus sends', { skip }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-compose-'))
  const schema = runName('compose')
  t.teardown(async () => {
    await dropSchema(schema)
    await rm(dir, { recursive: true, force: true })
  })
  const [, service] = gatewayServices()[0] as [string, ComposeService]
  const env = {
    ...clusterEnv({ schema, prefix: runName('compose'), dataDir: join(dir, 'data') }),
    ...composeEnvironment(service, { LANEGATE_ADMIN_TOKEN: ADMIN_TOKEN }),
    // The compose network's host names do not resolve here: this machine's PostgreSQL and Redis stand in.
    DATABASE_URL: TEST_POSTGRES_URL,
    REDIS_URL: TEST_REDIS_URL,
    LANEGATE_ADMIN_PORT: '0',
  }
  const gateway = await spawnGateway({ config: CLUSTER, env })
  t.teardown(async () => {
    gateway.child.kill('SIGTERM')
    await gateway.exited
  })
  const adminPort = new URL(gateway.admin ?? 'http://x').port
  t.match(gateway.admin, /^http:\/\/0\.0\.0\.0:\d+/, 'the admin listener is on 0.0.0.0, as compose asks')
  const admin = `http://127.0.0.1:${adminPort}`
  const anonymous = await fetch(`${admin}/metrics`)
  t.equal(anonymous.status, 401, 'metrics without the token are refused')
  const scraped = await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  t.equal(scraped.status, 200, 'the scrape with the token is served')
  t.match(await scraped.text(), /^# HELP lanegate_/m, 'and is the gateway\'s metrics')
  const probe = await fetch(`${admin}/healthz`)
  t.equal(probe.status, 200, 'the health probe needs no token')
})
