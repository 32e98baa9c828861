import t from 'tap'
import { configHead, gatewayOnConfig } from '../helpers/own-config-gateway.js'
import type { SpawnedGateway } from '../helpers/spawn-gateway.js'
import { startBackend, type Backend } from '../helpers/upstream-servers.js'
import { rewriteAndReload } from '../helpers/reload-helpers.js'
import { waitFor, waitForText } from '../helpers/wait-for.js'

/**
 * Hot reload of a `proxy` block on a real `lanegate start` (SIGHUP after rewriting its config file): targets and
 * weights change without failing a request in flight; a changed route list is reported as restart-required.
 */
const config = (dataDir: string, targets: string, routes = ''): string => `${configHead(dataDir)}
services:
  p:
    type: proxy
    prefix: /legacy/p
    envelope: exchange
    upstream: { targets: ${targets} }
    routes:
      any: { methods: [GET], path: "/*" }
${routes}`

let gateway: SpawnedGateway
let file: string
/** The data dir as the started file names it (relative to the file's folder): a rewrite keeps it. */
const dataDir = './data'
let a: Backend
let b: Backend
/** Answers the /slow request A is holding. */
let releaseSlow: () => void = () => {}

async function rewrite (text: string): Promise<void> {
  await rewriteAndReload(gateway, file, text)
}

async function servedBy (path = '/legacy/p/x'): Promise<string> {
  const res = await fetch(`${gateway.base}${path}`)
  return `${res.status} ${await res.text()}`
}

t.before(async () => {
  a = await startBackend(t, 'A')
  b = await startBackend(t, 'B')
  a.handle((req, res) => {
    const answer = (): void => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('A') }
    // /slow waits until the test releases it: in flight for as long as a reload takes to land.
    if (req.url === '/slow') releaseSlow = answer
    else answer()
  })
  const started = await gatewayOnConfig(t, (data) => config(data, `[ "${a.url}" ]`))
  gateway = started.gateway
  file = started.file
})

t.test('a request in flight on a removed target finishes; new requests go to the new target', async (t) => {
  t.equal(await servedBy(), '200 A')
  const inFlight = servedBy('/legacy/p/slow')
  await waitFor(() => a.seen.some((r) => r.url === '/slow'), { what: 'the slow request to reach A' })
  await rewrite(config(dataDir, `[ "${b.url}" ]`))
  await waitFor(async () => await servedBy() === '200 B', { what: 'the new target to serve' })
  t.equal(await servedBy(), '200 B', 'the new target serves')
  releaseSlow()
  t.equal(await inFlight, '200 A', 'the request in flight on the removed target was not failed')
  await waitForText(gateway.output, 'config reloaded', { what: 'the reload to be logged' })
  t.match(gateway.output(), /config reloaded/)
})

t.test('new weights apply at once: 3 to 1 gives 6 of 8 requests to the heavier target', async (t) => {
  await rewrite(config(dataDir, `[ { url: "${a.url}", weight: 3 }, "${b.url}" ]`))
  await waitFor(async () => await servedBy() === '200 A', { what: 'the new weights to apply' })
  // Smooth weighted round robin: every 4 picks give A 3 and B 1, whatever the phase the probe left it in.
  const answers: string[] = []
  for (let i = 0; i < 8; i++) answers.push(await servedBy())
  t.same([answers.filter((x) => x === '200 A').length, answers.filter((x) => x === '200 B').length], [6, 2])
})

t.test('a changed route list is reported as restart-required; the routes served stay the ones started with', async (t) => {
  const before = gateway.output().length
  await rewrite(config(dataDir, `[ "${b.url}" ]`, '      extra: { methods: [POST], path: /extra }\n'))
  await waitFor(() => gateway.output().slice(before).includes('take effect only after a restart'), { what: 'the restart-required warning' })
  t.match(gateway.output().slice(before), /services\.p\.routes/)
  const res = await fetch(`${gateway.base}/legacy/p/extra`, { method: 'POST' })
  t.same([res.status, await res.json()], [405, { error: 'method_not_allowed', message: 'Method not allowed.' }])
})
