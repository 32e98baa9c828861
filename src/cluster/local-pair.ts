/**
 * `npm run cluster`: the topology of docker/compose.yaml without Docker. Starts two `lanegate start` processes on
 * two ports (default 8081 and 8082; `LANEGATE_CLUSTER_PORTS=9001,9002` to change) with docker/gateway.cluster.yaml,
 * against this machine's PostgreSQL and Redis (DATABASE_URL / REDIS_URL override the file's defaults). Both use
 * the same data_dir, so they share the signing keys; each writes its own pid file there (gw-1.pid, gw-2.pid). Ctrl-C (or SIGTERM) stops both, each draining its in-flight
 * requests; when one exits on its own the other is stopped too, and the script exits non-zero. Their admin
 * listeners (/metrics, /readyz) get ports 9464, 9465… (`LANEGATE_ADMIN_PORT` of the first; the file reads it).
 * The file's admin listener asks for the bearer token in LANEGATE_ADMIN_TOKEN; when it is unset this script makes
 * one up for the run and writes it to `<data dir>/admin-token` (never to the terminal: terminals get logged).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const bin = `${root}bin/lanegate.js`
const config = process.env.LANEGATE_CLUSTER_CONFIG ?? `${root}docker/gateway.cluster.yaml`
const ports = (process.env.LANEGATE_CLUSTER_PORTS ?? '8081,8082').split(',').map((p) => Number(p.trim()))
const firstAdminPort = Number(process.env.LANEGATE_ADMIN_PORT ?? 9464)
// The file's data_dir, relative to the file's folder as the gateway resolves it.
const dataDir = resolve(dirname(config), process.env.LANEGATE_DATA_DIR ?? '../data/cluster')

/** Each instance's pid file (`LANEGATE_PID_FILE`): `<data dir>/gw-1.pid`, `gw-2.pid`… */
function pidFileOf (name: string): string {
  return join(dataDir, `${name}.pid`)
}

/**
 * The admin bearer token both instances read (docker/gateway.cluster.yaml `admin.auth.token_env`): the caller's
 * LANEGATE_ADMIN_TOKEN, or a random one for this run, written owner-only beside the keys so a scrape can use it.
 */
function adminToken (): { token: string, file?: string } {
  const given = process.env.LANEGATE_ADMIN_TOKEN
  if (given !== undefined && given !== '') return { token: given }
  const token = randomBytes(24).toString('hex')
  mkdirSync(dataDir, { recursive: true })
  const file = join(dataDir, 'admin-token')
  writeFileSync(file, `${token}\n`, { mode: 0o600 })
  chmodSync(file, 0o600) // an older file keeps its mode through writeFileSync
  return { token, file }
}

interface Instance { name: string, port: number, child: ChildProcess, exited: Promise<number | null> }

function startInstance (name: string, port: number, adminPort: number, token: string): Instance {
  const child = spawn(process.execPath, [bin, 'start', '--config', config, '--port', String(port)], {
    cwd: root,
    // Each instance its own admin port: two on one host cannot share 9464.
    // ...and its own pid file: on one data_dir both would write lanegate.pid, and `lanegate stop` would reach one.
    env: { ...process.env, LANEGATE_ADMIN_PORT: String(adminPort), LANEGATE_ADMIN_TOKEN: token, LANEGATE_PID_FILE: pidFileOf(name) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // Each line prefixed with the instance's name, so the two logs stay readable in one terminal.
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => { process.stdout.write(`[${name}] ${line}\n`) })
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { name, port, child, exited }
}

function main (): void {
  if (ports.length < 1 || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
    console.error(`LANEGATE_CLUSTER_PORTS must list ports, e.g. 8081,8082 (got "${process.env.LANEGATE_CLUSTER_PORTS}")`)
    process.exitCode = 1
    return
  }
  console.log(`starting ${ports.length} gateways with ${config} on ports ${ports.join(', ')}; Ctrl-C stops them`)
  console.log(`to signal one: LANEGATE_PID_FILE=${pidFileOf('gw-1')} lanegate reload --config ${config} (or stop)`)
  const admin = adminToken()
  if (admin.file !== undefined) console.log(`admin listeners ask for a bearer token: LANEGATE_ADMIN_TOKEN was unset, so this run made one up, in ${admin.file}`)
  const instances = ports.map((port, i) => startInstance(`gw-${i + 1}`, port, firstAdminPort === 0 ? 0 : firstAdminPort + i, admin.token))
  let stopping = false

  function stopAll (signal: NodeJS.Signals): void {
    if (stopping) return
    stopping = true
    for (const { child } of instances) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    }
  }

  // Ctrl-C reaches the whole foreground process group, children included; forwarding SIGTERM as well covers a
  // plain `kill` of this script. A second signal is passed on as is (the gateways then exit at once).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) for (const { child } of instances) child.kill(signal)
      stopAll('SIGTERM')
    })
  }
  for (const instance of instances) {
    void instance.exited.then((code) => {
      if (!stopping) {
        console.error(`[${instance.name}] exited (${code}) on its own; stopping the others`)
        process.exitCode = 1
        stopAll('SIGTERM')
      }
    })
  }
  void Promise.all(instances.map((i) => i.exited)).then((codes) => {
    if (codes.some((code) => code !== 0)) process.exitCode = 1
  })
}

main()
