import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { join } from 'node:path'
import t from 'tap'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { httpsGet } from '../helpers/tls-clients.js'
import { createTestPki, type Issued } from '../helpers/test-pki.js'
import { until, waitFor, waitForText } from '../helpers/wait-for.js'

/**
 * Certificate rotation without a restart (issue 21) on a real `lanegate start`: while a load of keep-alive and
 * new-connection requests runs, the pair is replaced twice (written beside, then renamed over, key and
 * certificate); no request fails, and new handshakes get the new serial once the files changed. A pair that does
 * not load is logged and the running one kept.
 */

const pki = createTestPki('Rotation CA')
t.teardown(() => pki.remove())
const ca = readFileSync(pki.caCert)
const first = pki.issue('first', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const second = pki.issue('second', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const third = pki.issue('third', 'localhost', { sans: 'DNS:localhost,IP:127.0.0.1' })
const certFile = join(pki.dir, 'live.crt')
const keyFile = join(pki.dir, 'live.key')

/** Puts `pair` in place the way a certificate manager does: new files beside, renamed over the old ones. */
function install (pair: Issued): void {
  copyFileSync(pair.key, `${keyFile}.new`)
  copyFileSync(pair.cert, `${certFile}.new`)
  renameSync(`${keyFile}.new`, keyFile)
  renameSync(`${certFile}.new`, certFile)
}

install(first)
const file = join(pki.dir, 'gateway.yaml')
writeFileSync(file, `
server:
  data_dir: ${join(pki.dir, 'data')}
  tls: { cert_file: live.crt, key_file: live.key }
admin: false
scopes:
  pricing:read: { description: Read prices }
`)

/** Serial a new handshake sees now. */
async function freshSerial (base: string): Promise<string> {
  return (await httpsGet(`${base}/healthz`, { ca, agent: false })).serial
}

async function waitForSerial (base: string, serial: string): Promise<void> {
  await waitFor(async () => await freshSerial(base) === serial, { what: `the listener to rotate to ${serial}`, intervalMs: 50 })
}

t.test('2,000+ requests over keep-alive and new connections while the pair is replaced twice: none fails', async (t) => {
  const gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4, ca })
  t.teardown(() => keepAlive.destroy())

  let stop = false
  let done = 0
  const failures: string[] = []
  const serialsOnNewConnections = new Set<string>()
  async function worker (fresh: boolean): Promise<void> {
    while (!stop) {
      try {
        const answer = await httpsGet(`${gateway.base}/healthz`, fresh ? { ca, agent: false } : { agent: keepAlive })
        if (answer.status !== 200 || answer.body !== '{"status":"ok","config_version":1}') failures.push(`${answer.status} ${answer.body}`)
        if (fresh) serialsOnNewConnections.add(answer.serial)
      } catch (error) {
        failures.push((error as Error).message)
      }
      done++
    }
  }
  const workers = [true, true, true, false, false, false].map((fresh) => worker(fresh))

  // Until `count` requests are answered, or a failure (reported below); at the deadline the count reached is too.
  const answered = (count: number): Promise<boolean> => until(() => done >= count || failures.length > 0, 120_000)
  await answered(300)
  install(second)
  await waitForSerial(gateway.base, second.serial)
  await answered(done + 300)
  install(third)
  await waitForSerial(gateway.base, third.serial)
  await answered(Math.max(2_000, done + 300))
  stop = true
  await Promise.all(workers)

  t.ok(done >= 2_000, `${done} requests`)
  t.same(failures, [])
  t.same([...serialsOnNewConnections].sort(), [first.serial, second.serial, third.serial].sort())
  t.equal(await freshSerial(gateway.base), third.serial)
  t.match(gateway.output(), new RegExp(`"serial":"${third.serial}".*"msg":"TLS certificate loaded for new connections"`))
})

t.test('a pair that does not load is logged and the running pair kept', async (t) => {
  install(first)
  const gateway = await spawnGateway({ config: file, admin: false })
  t.teardown(() => { gateway.child.kill('SIGTERM'); return gateway.exited })
  // A key that is not the certificate's: the listener keeps serving the first pair.
  copyFileSync(second.key, `${keyFile}.new`)
  renameSync(`${keyFile}.new`, keyFile)
  await waitForText(gateway.output, 'TLS certificate not rotated', { what: 'the rotation failure to be logged' })
  t.match(gateway.output(), /"level":50.*"setting":"server\.tls\.key_file".*"msg":"TLS certificate not rotated; the running pair stays: .*live\.key: the key does not match the certificate in .*live\.crt"/)
  const answer = await httpsGet(`${gateway.base}/healthz`, { ca, agent: false })
  t.equal(answer.status, 200)
  t.equal(answer.serial, first.serial)
  // SIGHUP once the files are whole again: the matching pair is taken.
  copyFileSync(first.key, `${keyFile}.new`)
  renameSync(`${keyFile}.new`, keyFile)
  gateway.child.kill('SIGHUP')
  await waitForSerial(gateway.base, first.serial)
  t.equal((await httpsGet(`${gateway.base}/healthz`, { ca, agent: false })).status, 200)
})
