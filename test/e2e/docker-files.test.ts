import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { repoPath } from '../helpers/paths.js'

/**
 * There is no Docker engine in CI, so docker/ is checked statically (issue 15 finding 12): the compose file
 * mounts the cluster config that exists in the repository, over the config path the image starts with, and that
 * config passes the real `lanegate validate`. The same file serves `npm run cluster` (test/e2e/cluster.test.ts).
 */
const COMPOSE = repoPath('docker/compose.yaml')
const CLUSTER = repoPath('docker/gateway.cluster.yaml')

interface ComposeService {
  image?: string
  build?: unknown
  volumes?: string[]
  depends_on?: Record<string, { condition?: string }>
  healthcheck?: { test?: unknown }
  restart?: string
}

function gatewayServices (): Array<[string, ComposeService]> {
  const compose = parse(readFileSync(COMPOSE, 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }
  return Object.entries(compose.services).filter(([, service]) => service.build !== undefined)
}

function validate (file: string): Promise<{ code: number | null, output: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [repoPath('bin/lanegate.js'), 'validate', file], { stdio: ['ignore', 'pipe', 'pipe'] })
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
