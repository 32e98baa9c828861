import type { ChildProcess } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { benchConfigText } from './bench-config.js'
import { hashSecret } from '../src/secrets/secret-hash.js'
import { BENCH_API_KEY } from './tokens.js'
import { logTail, freePort, spawnPinned, stopChild, waitForPort } from './processes.js'
import type { PollReport } from './console-poller.js'
import { harnessScript, REPO_ROOT } from './paths.js'
import { nginxConfig, nginxBinary } from './peers.js'
import { benchCertificate, type BenchCertificate } from './tls-certs.js'
import { GC_SOCKET_ENV } from './gc-protocol.js'
import { SINK_GATEWAY_HEADER } from './otlp-sink-counts.js'
import { HEAP_SOCKET_ENV } from './heap-client.js'
import { CALLGRIND_NODE_FLAGS, callgrindArgs, keepPerfMap, valgrindBinary } from './callgrind.js'
import { GATEWAY_NODE_FLAGS } from '../src/node-tuning/node-flags.js'
import { BENCH_MIRROR, MIRROR_DELAY_MS } from './mirror-settings.js'

const REPO_BIN = join(REPO_ROOT, 'bin', 'lanegate.js')

/** A server the harness started and measures. */
export interface RunningServer {
  name: string
  port: number
  /** The pid whose process tree's CPU is measured. */
  pid: number
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string
  /** The console gateway's admin listener, http://127.0.0.1:PORT. */
  adminUrl?: string
  /** A Node server started with the GC preload (`watchGc`): the Unix socket it answers on (bench/gc-preload.ts). */
  gcSocket?: string
  /** A Node server started with the heap preload (`countHeap`): the Unix socket it answers on (bench/heap-preload.ts). */
  heapSocket?: string
  /** `--instructions`: the file its callgrind dumps to (`<file>.<n>` per dump); the process is valgrind running it. */
  callgrindOut?: string
}

/** The console poller of a run (bench/console-poller.ts): its process, and how its polls went so far. */
export interface ConsolePoller {
  pid: number
  /** Rounds (overview + upstreams) that got 200s, rounds that did not, the first failure's message, and whether it still runs. */
  polls (): { ok: number, failed: number, firstError?: string, running: boolean }
}

/**
 * Which gateway config: unlimited limits, a tight content limit (429 scenario), a fresh one for memory, the
 * main one with metrics off (`admin: false`) to measure what metrics cost, the limits counted in Redis (exact:
 * a round trip per request; `redis-synced`: pre-counted, synchronised every BENCH_REDIS_SYNC_INTERVAL_MS),
 * `lanegate start` with server.workers 1 or 2 (the workers scenario), or the demo's `pricing` proxy service in
 * front of two bench lanes (`proxy`, the proxy-service scenario), or the main config served over HTTPS with a
 * certificate made for the run (`tls`, the tls scenario), or the main config with the operator console open (`console`,
 * `--console`: its admin listener serves; consolePoller() polls it from outside the gateway's process tree), or the
 * main config again in a process of its own (`console-twin`, the control beside the console's pair), or (`--telemetry`) the
 * main config exporting every trace's spans to the bench's OTLP sink (`trace-100`), deciding against every trace
 * (`trace-0`: sample_ratio 0, the same sink), or writing the access log to a file in the work folder (`access-file`),
 * or `proxy`'s config again in a process of its own (`proxy-twin`), or with its upstream made two groups, each with
 * circuit breakers, and a sticky split between them (`proxy-breaker-split`), or the pricing block with a primary group
 * (the lane) and a slow shadow group, a route mirroring to it, and the admin listener for its metrics (`proxy-mirror`).
 */
export type GatewayFlavour = 'main' | 'flood' | 'memory' | 'no-metrics' | 'redis' | 'redis-synced' | 'workers-1' | 'workers-2' | 'workers-2-precount' | 'proxy' | 'tls' | 'proxy-cache' | 'proxy-transform' | 'api-key' | 'external-auth' | 'twin' | 'console' | 'console-twin' | 'trace-100' | 'trace-0' | 'access-file' | 'proxy-twin' | 'proxy-breaker-split' | 'proxy-mirror'

/** The Redis of the auth-get-redis scenario (its keys get a prefix of their own; nothing is flushed). */
export const BENCH_REDIS_URL = process.env.LANEGATE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * `sync_interval_ms` of the pre-counting variant: the value docs/configuration.md suggests. A sync costs one
 * pipeline per key and interval (20 a second per busy key here), not per request, so the interval moves the
 * over-admission bound (3 intervals plus a round trip of other instances' traffic), not the CPU measured.
 */
export const BENCH_REDIS_SYNC_INTERVAL_MS = 50
/** The workers' pre-count interval of the `workers-2-precount` variant (memory driver, synced with the primary). */
export const BENCH_WORKERS_SYNC_INTERVAL_MS = 20

export interface ServerSetContext {
  /** Temp folder for configs, data dirs and logs of this scenario. */
  workDir: string
  /** Core the servers are pinned to (undefined: not pinned). */
  core?: number
  /** The demo gateway.yaml text the bench configs derive from. */
  demoText: string
  /** When set, gateways run under `--cpu-prof` writing here. */
  profileDir?: string
  /** Another built checkout whose gateway `compareGateway()` starts (`--compare`). */
  compareRoot?: string
  /**
   * Core the console poller runs on (undefined: not pinned): the load generator's, never the servers', so the
   * poller's own CPU neither lands in the gateway's measurement nor competes with it for its core.
   */
  pollerCore?: number
  /**
   * The latency scenario: start the Node servers (not `lanegate start`'s cluster, not nginx) with the GC preload,
   * so each run can be told the GC pauses its servers saw. Off elsewhere: a throughput run keeps its servers bare.
   */
  watchGc?: boolean
  /**
   * Start the Node servers with the heap preload, so each run can be told the bytes its server's JS heap allocated
   * (bench/heap-preload.ts). Not under callgrind, whose counts it would enter.
   */
  countHeap?: boolean
  /**
   * `--instructions`: every server starts under valgrind's callgrind (instrumentation off until the harness turns
   * it on), its output files in this folder.
   */
  callgrindDir?: string
  /** `--signing-alg`: the algorithm of the key each gateway generates. */
  signingAlgorithm?: 'EdDSA' | 'ES256' | 'RS256'
}

/** How long a server may take to listen: under valgrind a gateway boots several times slower than natively. */
const START_MS = 20_000
const START_UNDER_CALLGRIND_MS = 180_000

/**
 * The servers of one scenario, started on demand and each started once: asking twice for the lane returns the
 * same process, so "lane direct" and "through the gateway" hit the very same server.
 */
export class ServerSet {
  private readonly children: ChildProcess[] = []
  private readonly byName = new Map<string, ChildProcess>()
  /** `--instructions`: the callgrind output file of each server started under it, for its perf map (keepPerfMap). */
  private readonly callgrindOuts = new Map<ChildProcess, string>()
  private readonly started = new Map<string, Promise<RunningServer>>()
  private benchCertificate: BenchCertificate | undefined
  private poller: Promise<ConsolePoller> | undefined

  constructor (private readonly context: ServerSetContext) {}

  /** The data dir of the gateway of `flavour` (`compare`: the --compare checkout's). */
  private gatewayDataDir (flavour: GatewayFlavour | 'compare'): string {
    return join(this.context.workDir, `gateway-${flavour}-data`)
  }

  /** The access log the `access-file` gateway writes (`--telemetry`). */
  accessLogFile (): string {
    return join(this.context.workDir, 'gateway-access-file.access.log')
  }

  private once (name: string, start: () => Promise<RunningServer>): Promise<RunningServer> {
    let server = this.started.get(name)
    if (server === undefined) {
      server = start()
      this.started.set(name, server)
    }
    return server
  }

  /**
   * `command args` as started: as they are, or (`--instructions`) under callgrind writing to `<name>.callgrind`
   * in the callgrind folder. valgrind runs the program in its own process, so the pid is still the server's.
   */
  private wrapped (name: string, command: string, args: string[]): { command: string, args: string[], callgrindOut?: string } {
    const dir = this.context.callgrindDir
    if (dir === undefined) return { command, args }
    const valgrind = valgrindBinary()
    if (valgrind === undefined) throw new Error('--instructions needs valgrind and callgrind_control (apt-get install valgrind)')
    const callgrindOut = join(dir, `${name}.callgrind`)
    const flags = command === process.execPath ? CALLGRIND_NODE_FLAGS : []
    return { command: valgrind, args: [...callgrindArgs(callgrindOut), command, ...flags, ...args], callgrindOut }
  }

  /**
   * Spawns `command args` (args may use {port}), pinned, and waits until it listens on `port` (a free one unless the
   * server's own config already names it: nginx).
   */
  private async spawn (name: string, command: string, args: string[], env?: NodeJS.ProcessEnv, pinned = true, chosenPort?: number): Promise<RunningServer> {
    const port = chosenPort ?? await freePort()
    const logFile = join(this.context.workDir, `${name}.log`)
    const core = pinned ? this.context.core : undefined
    const start = this.wrapped(name, command, args.map((a) => a.replaceAll('{port}', String(port))))
    const child = spawnPinned(start.command, start.args, { core, logFile, env })
    this.children.push(child)
    this.byName.set(name, child)
    if (start.callgrindOut !== undefined) this.callgrindOuts.set(child, start.callgrindOut)
    try {
      await waitForPort(port, child, this.startMs())
    } catch (error) {
      throw new Error(`${name} did not start: ${(error as Error).message}\n${logTail(logFile)}`)
    }
    return { name, port, pid: child.pid ?? 0, url: `http://127.0.0.1:${port}`, ...(start.callgrindOut === undefined ? {} : { callgrindOut: start.callgrindOut }) }
  }

  private startMs (): number {
    return this.context.callgrindDir === undefined ? START_MS : START_UNDER_CALLGRIND_MS
  }

  /**
   * A Node server of the harness, started with the gateway's V8 flags (src/node-tuning/node-flags.ts) whatever it is:
   * gateway, lane, bare fastify, peer or floor, so no side of a comparison runs a different V8.
   */
  private node (name: string, script: string, args: string[], nodeArgs: string[] = []): Promise<RunningServer> {
    return this.spawnNode(name, [...GATEWAY_NODE_FLAGS, ...nodeArgs, harnessScript(script), '--port', '{port}', ...args])
  }

  /**
   * Spawns `node args` (pinned), with the GC preload and its socket when the set watches GC, and the heap preload
   * and its socket when it counts heap allocation.
   */
  private async spawnNode (name: string, args: string[]): Promise<RunningServer> {
    const preloads: string[] = []
    const env: NodeJS.ProcessEnv = { ...process.env }
    const sockets: Pick<RunningServer, 'gcSocket' | 'heapSocket'> = {}
    if (this.context.watchGc === true) {
      sockets.gcSocket = env[GC_SOCKET_ENV] = join(this.context.workDir, `${name}.gc.sock`)
      preloads.push('--import', pathToFileURL(harnessScript('./gc-preload.js')).href)
    }
    if (this.context.countHeap === true) {
      sockets.heapSocket = env[HEAP_SOCKET_ENV] = join(this.context.workDir, `${name}.heap.sock`)
      preloads.push('--import', pathToFileURL(harnessScript('./heap-preload.js')).href)
    }
    if (preloads.length === 0) return this.spawn(name, process.execPath, args)
    return { ...await this.spawn(name, process.execPath, [...preloads, ...args], env), ...sockets }
  }

  /**
   * The bench lane (fixed small JSON reply); `lane-b` is a second one (the proxy service's second target);
   * `lane-slow` answers each request MIRROR_DELAY_MS late (the proxy-mirror scenario's mirror).
   */
  lane (instance: 'lane' | 'lane-b' | 'lane-slow' = 'lane'): Promise<RunningServer> {
    return this.once(instance, () => this.node(instance, './servers/lane.js', instance === 'lane-slow' ? ['--delay-ms', String(MIRROR_DELAY_MS)] : []))
  }

  /** The `--telemetry` variants' OTLP/HTTP collector (bench/servers/otlp-sink.ts): answers every export 200, counts spans. */
  otlpSink (): Promise<RunningServer> {
    return this.once('otlp-sink', () => this.node('otlp-sink', './servers/otlp-sink.js', []))
  }

  /** Bare fastify hello-world; `asGateway`: with the fastify options a gateway needs (a logger, request ids). */
  hello (asGateway = false): Promise<RunningServer> {
    if (asGateway) return this.once('fastify-hello-as-gateway', () => this.node('fastify-hello-as-gateway', './servers/hello.js', ['--as-gateway']))
    return this.once('fastify-hello', () => this.node('fastify-hello', './servers/hello.js', []))
  }

  /** The gateway with a bench config derived from the demo config, store 001's lane = the bench lane. */
  gateway (flavour: GatewayFlavour = 'main'): Promise<RunningServer> {
    return this.once(`gateway-${flavour}`, async () => {
      const lane = await this.lane()
      const dataDir = this.gatewayDataDir(flavour)
      await mkdir(dataDir, { recursive: true })
      const file = join(this.context.workDir, `gateway-${flavour}.yaml`)
      const adminPort = flavour === 'console' || flavour === 'proxy-mirror' ? await freePort() : undefined
      const workers = flavour === 'workers-1' ? 1 : flavour === 'workers-2' || flavour === 'workers-2-precount' ? 2 : undefined
      await writeFile(file, benchConfigText(this.context.demoText, {
        dataDir,
        laneUrl: lane.url,
        ...(this.context.signingAlgorithm === undefined ? {} : { signingAlgorithm: this.context.signingAlgorithm }),
        floodPoints: flavour === 'flood' ? 100 : undefined,
        metrics: flavour !== 'no-metrics',
        ...(adminPort === undefined ? {} : { adminPort }),
        ...(flavour === 'redis' || flavour === 'redis-synced' ? { redisUrl: BENCH_REDIS_URL, redisPrefix: `lanegate-bench-${flavour}-${process.pid}-${Date.now()}` } : {}),
        ...(flavour === 'redis-synced' ? { redisSyncIntervalMs: BENCH_REDIS_SYNC_INTERVAL_MS } : {}),
        workers,
        ...(flavour === 'workers-2-precount' ? { workersSyncIntervalMs: BENCH_WORKERS_SYNC_INTERVAL_MS } : {}),
        ...(flavour === 'proxy' || flavour === 'proxy-twin' ? { proxyTargets: [lane.url, (await this.lane('lane-b')).url] } : {}),
        ...(flavour === 'proxy-breaker-split' ? { proxyTargets: [lane.url, (await this.lane('lane-b')).url], breakerSplit: true } : {}),
        ...(flavour === 'proxy-mirror' ? { proxyTargets: [lane.url], mirror: { ...BENCH_MIRROR, url: (await this.lane('lane-slow')).url } } : {}),
        ...(flavour === 'tls' ? { tls: this.certificate() } : {}),
        ...(flavour === 'proxy-cache' ? { proxyTargets: [lane.url], cache: true } : {}),
        ...(flavour === 'proxy-transform' ? { proxyTargets: [lane.url], transform: true } : {}),
        ...(flavour === 'api-key' ? { apiKeyHash: await hashSecret(BENCH_API_KEY) } : {}),
        // The decision service: bare fastify's POST / answers 200 (allow); asked once, then the cache answers.
        ...(flavour === 'external-auth' ? { externalAuthUrl: `${(await this.hello()).url}/` } : {}),
        ...(flavour === 'trace-100' || flavour === 'trace-0' ? { traces: { endpoint: `${(await this.otlpSink()).url}/v1/traces`, sampleRatio: flavour === 'trace-100' ? 1 : 0, headers: { [SINK_GATEWAY_HEADER]: flavour } } } : {}),
        ...(flavour === 'access-file' ? { accessLogFile: this.accessLogFile() } : {}),
      }))
      if (workers !== undefined) {
        // The real `lanegate start` (a primary and its workers when workers > 1), pinned like every other server:
        // the primary and its workers inherit the core, so CPU per request compares like with like with one process
        // (an unpinned pair spread over the load generator's core too, and its CPU per request was not comparable).
        return this.spawn(`gateway-${flavour}`, process.execPath, [...GATEWAY_NODE_FLAGS, REPO_BIN, 'start', '--config', file, '--port', '{port}', '--host', '127.0.0.1'])
      }
      const profile = this.context.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', this.context.profileDir]
      const open = adminPort === undefined ? [] : ['--admin']
      const server = await this.node(`gateway-${flavour}`, './servers/gateway.js', ['--config', file, ...open], profile)
      if (adminPort !== undefined) {
        // The admin listener starts after the public one: wait for it too before anything polls it.
        await waitForPort(adminPort, this.byName.get(server.name) as ChildProcess, this.startMs())
        return { ...server, adminUrl: `http://127.0.0.1:${adminPort}` }
      }
      return flavour === 'tls' ? { ...server, url: server.url.replace('http:', 'https:') } : server
    })
  }

  /**
   * The open console page of the `console` gateway (started if need be): bench/console-poller.ts in a process of
   * its own, the orchestrator's child pinned to `pollerCore`, so it is not in the gateway's process tree whose CPU
   * the load generator reads. Resolves once a first round of polls got its 200s (the console is open when the
   * measurement starts); rejects if the first round failed or the poller died. One poller per set.
   */
  consolePoller (): Promise<ConsolePoller> {
    this.poller ??= this.startPoller()
    return this.poller
  }

  private async startPoller (): Promise<ConsolePoller> {
    const gateway = await this.gateway('console')
    if (gateway.adminUrl === undefined) throw new Error('the console gateway has no admin listener')
    const logFile = join(this.context.workDir, 'console-poller.log')
    const child = spawnPinned(process.execPath, [harnessScript('./console-poller.js'), '--url', gateway.adminUrl], { core: this.context.pollerCore, logFile, ipc: true })
    this.children.push(child)
    this.byName.set('console-poller', child)
    const counts: { ok: number, failed: number, firstError?: string } = { ok: 0, failed: 0 }
    await new Promise<void>((resolve, reject) => {
      child.on('message', (message: PollReport) => {
        if (message.ok) {
          counts.ok++
          resolve()
        } else {
          counts.failed++
          counts.firstError ??= message.error
          if (counts.ok === 0) reject(new Error(`the console poller's first round failed: ${message.error}`))
        }
      })
      child.once('exit', (code, signal) => reject(new Error(`the console poller exited (${code ?? signal}) before its first poll\n${logTail(logFile)}`)))
    })
    return { pid: child.pid ?? 0, polls: () => ({ ...counts, running: child.exitCode === null && child.signalCode === null }) }
  }

  /** The run's self-signed certificate for 127.0.0.1 (made once, shared by lanegate's and nginx's TLS variants). */
  private certificate (): BenchCertificate {
    this.benchCertificate ??= benchCertificate(this.context.workDir)
    return this.benchCertificate
  }

  /**
   * The gateway of another built checkout (`--compare DIR`), booted by that checkout's own bench server from a
   * config its own bench-config.ts derives from its own gateway.yaml: each side runs the config it was built for,
   * with the same lane and the same lifted limits, so the difference measured is the code's.
   */
  compareGateway (): Promise<RunningServer> {
    const root = this.context.compareRoot
    if (root === undefined) throw new Error('no --compare checkout given')
    return this.once('gateway-compare', async () => {
      const lane = await this.lane()
      const dataDir = this.gatewayDataDir('compare')
      await mkdir(dataDir, { recursive: true })
      const file = join(this.context.workDir, 'gateway-compare.yaml')
      const { benchConfigText: compareConfigText } = await import(pathToFileURL(join(root, 'dist', 'bench', 'bench-config.js')).href) as typeof import('./bench-config.js')
      await writeFile(file, compareConfigText(await readFile(join(root, 'gateway.yaml'), 'utf8'), { dataDir, laneUrl: lane.url }))
      const profile = this.context.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', this.context.profileDir]
      return this.spawnNode('gateway-compare', [...await compareNodeOptions(root), ...profile, join(root, 'dist', 'bench', 'servers', 'gateway.js'), '--port', '{port}', '--config', file])
    })
  }

  /**
   * The token scenario's sign loop (bench/servers/sign-loop.ts): the main gateway's signing key (the one that
   * signed `token`, named by its kid) signing `token`'s header and payload.
   */
  signLoop (token: string): Promise<RunningServer> {
    return this.once('token-sign-only', () => {
      const [header = '', payload = ''] = token.split('.')
      const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string }
      // `keys`: the demo config's key_dir, which the bench config keeps.
      const keyFile = join(this.gatewayDataDir('main'), 'keys', `${kid}.pem`)
      return this.node('token-sign-only', './servers/sign-loop.js', ['--key-file', keyFile, '--signing-input', `${header}.${payload}`])
    })
  }

  /** Raw http-proxy-3 in front of the lane. */
  httpProxy (): Promise<RunningServer> {
    return this.once('http-proxy-3', async () => this.node('http-proxy-3', './servers/http-proxy.js', ['--target', (await this.lane()).url]))
  }

  /** lanegate's relay engine alone (node:http + an undici Pool, nothing else) in front of the lane. */
  undiciFloor (): Promise<RunningServer> {
    return this.once('undici-floor', async () => this.node('undici-floor', './servers/undici-floor.js', ['--target', (await this.lane()).url]))
  }

  /** The raw-`net` floor (a hand-parsed HTTP/1.1 relay on `net` sockets, bench/net-relay.ts) in front of the lane. */
  netFloor (): Promise<RunningServer> {
    return this.once('net-floor', async () => this.node('net-floor', './servers/net-floor.js', ['--target', (await this.lane()).url]))
  }

  /** fast-gateway (from bench/peers) in front of the lane. */
  fastGateway (): Promise<RunningServer> {
    return this.once('fast-gateway', async () => this.node('fast-gateway', './servers/fast-gateway.js', ['--target', (await this.lane()).url]))
  }

  /** Express Gateway (from bench/peers) in front of the lane, with only the proxy policy or with jwt + rate-limit. */
  expressGateway (policies: 'proxy' | 'jwt'): Promise<RunningServer> {
    const name = policies === 'proxy' ? 'express-gateway' : 'express-gateway-jwt'
    return this.once(name, async () => {
      const dir = join(this.context.workDir, name)
      await mkdir(dir, { recursive: true })
      return this.node(name, './servers/express-gateway.js', ['--target', (await this.lane()).url, '--dir', dir, '--policies', policies])
    })
  }

  /** nginx (Debian package) as a keep-alive reverse proxy in front of the lane; `tls`: terminating HTTPS too. */
  nginx (tls = false): Promise<RunningServer> {
    const name = tls ? 'nginx-tls' : 'nginx'
    return this.once(name, async () => {
      const binary = nginxBinary()
      if (binary === undefined) throw new Error('nginx is not installed')
      const lane = await this.lane()
      const dir = join(this.context.workDir, name)
      await mkdir(join(dir, 'tmp'), { recursive: true })
      const port = await freePort()
      // Under callgrind nginx serves in one process (no master forking a worker): the pid counted is the one serving.
      const singleProcess = this.context.callgrindDir !== undefined
      await writeFile(join(dir, 'nginx.conf'), nginxConfig({ dir, port, lanePort: lane.port, tls: tls ? this.certificate() : undefined, singleProcess }))
      const server = await this.spawn(name, binary, ['-e', 'stderr', '-p', `${dir}/`, '-c', join(dir, 'nginx.conf')], undefined, true, port)
      return tls ? { ...server, url: `https://127.0.0.1:${port}` } : server
    })
  }

  /** Stops one server this set started, by name (proxy-service: a target dies mid-run). */
  async stop (name: string): Promise<void> {
    const child = this.byName.get(name)
    if (child !== undefined) await this.stopOne(child)
  }

  /**
   * Stops every server this set started, newest first, so proxies go before the lane they relay to (no
   * "socket hang up" noise in their logs). Gateways get SIGTERM, so `--cpu-prof` profiles are written.
   */
  async stopAll (): Promise<void> {
    for (const child of [...this.children].reverse()) await this.stopOne(child)
  }

  private async stopOne (child: ChildProcess): Promise<void> {
    await stopChild(child)
    const callgrindOut = this.callgrindOuts.get(child)
    if (callgrindOut !== undefined && child.pid !== undefined) await keepPerfMap(child.pid, callgrindOut)
  }
}

/**
 * The node options the other checkout (`--compare DIR`) starts its gateway with: its own gateway flags
 * (src/node-tuning/node-flags.ts, src/runtime/ before the move), or for a checkout from before them its young-generation flag alone
 * (src/node-tuning/young-generation.ts), or none for one from before that, as its `npm start` did.
 */
async function compareNodeOptions (root: string): Promise<string[]> {
  const flags = await exportOf<readonly string[]>(join(root, 'dist', 'src', 'node-tuning', 'node-flags.js'), 'GATEWAY_NODE_FLAGS') ??
    await exportOf<readonly string[]>(join(root, 'dist', 'src', 'runtime', 'node-flags.js'), 'GATEWAY_NODE_FLAGS')
  if (flags !== undefined) return [...flags]
  const flag = await exportOf<string>(join(root, 'dist', 'src', 'runtime', 'young-generation.js'), 'YOUNG_GENERATION_FLAG')
  return flag === undefined ? [] : [flag]
}

/** One export of a module of another checkout; undefined when the module or the export is not there. */
async function exportOf<T> (file: string, name: string): Promise<T | undefined> {
  try {
    return (await import(pathToFileURL(file).href) as Record<string, T | undefined>)[name]
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return undefined
    throw error
  }
}
