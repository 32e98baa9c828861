import cluster from 'node:cluster'
import { hostname } from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import { ConfigError } from '../config/config-error.js'
import type { Gateway } from '../reload/live-config.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'
import { CONFIG_CHANNEL, openConfigStore, type ConfigStore, type ConfigVersion, type InstanceReport } from './config-store.js'
import { saveOfflineCopy } from './offline-copy.js'
import { storedFileName, type StoreStart } from './start-config.js'

/** What a process following the store runs now, for /readyz, metrics and the fleet view. */
export interface FollowState {
  applied: { version: number, sha256: string, author: string, at: number }
  refused: { version: number, reason: string, at: number } | undefined
  /** Whether the last look at the store succeeded. */
  storeReachable: boolean
}

export interface Follower {
  /** Looks at the store's head now (a notification, SIGHUP); a refused head is tried again. */
  checkNow (): void
  state (): FollowState
  stop (): Promise<void>
}

export interface FollowOptions extends StoreStart {
  gateway: Gateway
  logger: FastifyBaseLogger
  /** Told each version applied (after the swap) and each refused. */
  onApplied?: (state: FollowState) => void
  onRefused?: (state: FollowState) => void
  /** How often the head is read when no notification came (a missed one, a cut LISTEN connection); default 1000. */
  pollMs?: number
  /** How often the process reports to the instances table; default 5000. */
  heartbeatMs?: number
}

/**
 * Follows the config store: hears pushes by LISTEN (and reads the head every `pollMs` besides, for a notification
 * missed while the connection was down), validates the head as a reload would, and swaps it in through
 * `gateway.applyText` (the reload's rules and its zero-drop swap: requests in flight finish on their snapshot; the
 * start's `--port`/`--host` overrides apply to every version as to the first). A head that cannot be
 * applied on this host is refused here only: the process keeps what it runs, logs and reports the refusal.
 * The store going away changes nothing for traffic; the follower reconnects and catches up.
 */
export function followStore (options: FollowOptions): Follower {
  const { logger, gateway } = options
  const pollMs = options.pollMs ?? 1000
  const heartbeatMs = options.heartbeatMs ?? 5000
  const identity = processIdentity()
  let applied = options.started
  let appliedAt = Date.now()
  let refused = options.refused
  let reachable = options.notes.every((n) => n.level !== 'warn')
  let store: ConfigStore | undefined
  let listener: pg.Client | undefined
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let again = false
  let retryRefused = false
  let lastReport = 0
  let stopped = false
  let listening = true

  for (const note of options.notes) logger[note.level]({ config_version: options.started.version }, note.message)
  logger.info({ config_version: applied.version, sha256: applied.sha256, author: applied.author }, `config version ${applied.version} (by ${applied.author}: ${applied.message}) running`)
  void saveCopy(applied)

  const state = (): FollowState => ({
    applied: { version: applied.version, sha256: applied.sha256, author: applied.author, at: appliedAt },
    refused,
    storeReachable: reachable,
  })

  /** One look at a time; a look asked for meanwhile runs right after. */
  function tick (): void {
    if (stopped) return
    if (running !== undefined) {
      again = true
      return
    }
    clearTimeout(timer)
    running = look().finally(() => {
      running = undefined
      if (stopped) return
      if (again) {
        again = false
        tick()
      } else {
        timer = setTimeout(tick, pollMs)
        timer.unref()
      }
    })
  }

  async function look (): Promise<void> {
    try {
      store ??= await openConfigStore(options.url)
      await listen().catch((error: Error) => {
        // Without LISTEN (a pooler that refuses it, the connection limit) the poll still finds each push.
        if (listening) logger.warn({ err_message: error.message }, `config store: cannot LISTEN for pushes; reading the head every ${pollMs} ms`)
        listening = false
      })
      const head = await store.headVersion()
      const skip = refused?.version === head && !retryRefused
      retryRefused = false
      if (head > applied.version && !skip) await applyVersion(store, head)
      if (Date.now() - lastReport >= heartbeatMs) await report(store)
      if (!reachable) logger.info({ config_version: applied.version }, 'config store reachable again: following its head')
      reachable = true
    } catch (error) {
      if (reachable) logger.warn({ err_message: (error as Error).message, config_version: applied.version }, `config store unreachable: version ${applied.version} keeps serving; retrying every ${pollMs} ms`)
      reachable = false
    }
  }

  /** A LISTEN connection of its own; when it drops, the next look opens another (and reads the head it missed). */
  async function listen (): Promise<void> {
    if (listener !== undefined) return
    const client = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 3000 })
    const drop = (): void => {
      if (listener === client) listener = undefined
      client.end().catch(() => {})
    }
    client.on('error', drop)
    client.on('end', drop)
    client.on('notification', () => tick())
    await client.connect()
    await client.query(`LISTEN ${CONFIG_CHANNEL}`)
    listener = client
    listening = true
  }

  async function applyVersion (from: ConfigStore, head: number): Promise<void> {
    const version = await from.get(head)
    if (version === undefined) return
    // Validated and swapped in as a reload of the file is (the plugins loaded at start, onReload told): one at a time.
    const result = await gateway.applyText(version.text, storedFileName(options.baseDir, version.version))
    if (result.outcome !== 'rejected') {
      applied = version
      appliedAt = Date.now()
      refused = undefined
      logger.info({ config_version: version.version, sha256: version.sha256, author: version.author, outcome: result.outcome }, `config version ${version.version} (by ${version.author}: ${version.message}) applied`)
      options.onApplied?.(state())
      await saveCopy(version)
    } else {
      const error = result.error
      const reason = error instanceof ConfigError ? error.problems.map((p) => `${p.path || '(root)'}: ${p.message}`).join('; ') : error.message
      refused = { version: version.version, reason, at: Date.now() }
      logger.error({ config_version: version.version, author: version.author, running_version: applied.version, problems: error instanceof ConfigError ? error.problems : undefined }, `config version ${version.version} (by ${version.author}) refused on this host, version ${applied.version} keeps serving: ${reason}`)
      options.onRefused?.(state())
    }
    lastReport = 0
  }

  async function report (to: ConfigStore): Promise<void> {
    await to.report({ ...identity, applied: { version: applied.version, sha256: applied.sha256, at: appliedAt }, refused })
    lastReport = Date.now()
  }

  async function saveCopy (version: ConfigVersion): Promise<void> {
    try {
      await saveOfflineCopy(options.dataDir, version)
    } catch (error) {
      logger.warn({ err_message: (error as Error).message, config_version: version.version }, 'config store: cannot save the offline copy of the applied version')
    }
  }

  tick()
  return {
    checkNow: () => {
      retryRefused = true
      tick()
    },
    state,
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      await running
      await listener?.end().catch(() => {})
      await store?.close().catch(() => {})
    },
  }
}

/** This process in the instances table: the started process's host and pid, and which worker (0: a single process). */
function processIdentity (): Omit<InstanceReport, 'applied' | 'refused'> {
  const worker = isLanegateWorker() ? cluster.worker?.id ?? 0 : 0
  const startedPid = worker === 0 ? process.pid : process.ppid
  return { instanceId: `${hostname()}:${startedPid}`, worker, host: hostname(), pid: process.pid, startedAt: Date.now() }
}
