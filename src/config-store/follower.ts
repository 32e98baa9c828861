import cluster from 'node:cluster'
import { hostname } from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import { ConfigError } from '../config/config-error.js'
import { ConfigStoreError } from './errors.js'
import type { Gateway, ReloadLabel } from '../reload/live-config.js'
import { isLanegateWorker } from '../ipc/worker-marker.js'
import { openConfigStore, type ConfigStore, type ConfigVersion, type InstanceReport } from './config-store.js'
import { saveOfflineCopy } from './offline-copy.js'
import { PushListener } from './push-listener.js'
import { serialPoll, type SerialPoll } from './serial-poll.js'
import { storedFileName, type StoreStart } from './start-config.js'

/** While LISTEN fails, how often it is tried again by default (the head is read every poll meanwhile). */
const LISTEN_RETRY_MS = 30_000

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
  /** Only its `applyText`: the follower swaps each version in as a reload of the file would. */
  gateway: Pick<Gateway, 'applyText'>
  logger: FastifyBaseLogger
  /** Told each version applied (after the swap) and each refused. */
  onApplied?: (state: FollowState) => void
  onRefused?: (state: FollowState) => void
  /** How often the head is read when no notification came (a missed one, a cut LISTEN connection); default 1000. */
  pollMs?: number
  /** How often the process reports to the instances table; default 5000. */
  heartbeatMs?: number
  /** While LISTEN fails, how often it is tried again; default 30,000 (each try may wait out a connect timeout). */
  listenRetryMs?: number
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
  const follower = new StoreFollower(options)
  follower.start()
  return follower
}

class StoreFollower implements Follower {
  private readonly logger: FastifyBaseLogger
  private readonly pollMs: number
  private readonly heartbeatMs: number
  private readonly listenRetryMs: number
  private readonly identity = processIdentity()
  private applied: ConfigVersion
  private appliedAt = Date.now()
  private refused: FollowState['refused']
  private reachable: boolean
  private store: ConfigStore | undefined
  private readonly listener: PushListener
  private readonly poll: SerialPoll
  private retryRefused = false
  private lastReport = 0
  private forgotGone = false
  private listenWarned = false
  /** While LISTEN fails, when to try it again (each try may wait out a connect timeout). */
  private listenDueAt = 0

  constructor (private readonly options: FollowOptions) {
    this.logger = options.logger
    this.pollMs = options.pollMs ?? 1000
    this.heartbeatMs = options.heartbeatMs ?? 5000
    this.listenRetryMs = options.listenRetryMs ?? LISTEN_RETRY_MS
    this.applied = options.started
    this.refused = options.refused
    this.reachable = options.notes.every((n) => n.level !== 'warn')
    this.poll = serialPoll(async () => { await this.look() }, this.pollMs)
    this.listener = new PushListener(options.url, () => { this.poll.now() })
  }

  start (): void {
    const { started, notes } = this.options
    for (const note of notes) this.logger[note.level]({ config_version: started.version }, note.message)
    this.logger.info({ config_version: started.version, sha256: started.sha256, author: started.author }, `config version ${started.version} (by ${started.author}: ${started.message}) running`)
    void this.saveCopy(started)
    this.poll.now()
  }

  checkNow (): void {
    this.retryRefused = true
    this.poll.now()
  }

  state (): FollowState {
    const { applied } = this
    return { applied: { version: applied.version, sha256: applied.sha256, author: applied.author, at: this.appliedAt }, refused: this.refused, storeReachable: this.reachable }
  }

  async stop (): Promise<void> {
    await this.poll.stop()
    await this.listener.close()
    await this.store?.close().catch(() => {})
  }

  private async look (): Promise<void> {
    try {
      this.store ??= await openConfigStore(this.options.url)
      const listenError = await this.listen()
      const head = await this.store.headVersion()
      // Only a store that answers the head read refuses LISTEN; in an outage the head read's failure says why.
      if (listenError !== undefined) this.warnNoListen(listenError)
      const skip = this.refused?.version === head && !this.retryRefused
      this.retryRefused = false
      if (head > this.applied.version && !skip) await this.applyVersion(this.store, head)
      if (Date.now() - this.lastReport >= this.heartbeatMs) await this.report(this.store)
      if (!this.reachable) {
        this.logger.info({ config_version: this.applied.version }, 'config store reachable again: following its head')
        this.listenDueAt = 0
      }
      this.reachable = true
    } catch (error) {
      const what = error instanceof ConfigStoreError && error.code === 'failed' ? 'config store failing' : 'config store unreachable'
      if (this.reachable) this.logger.warn({ err_message: (error as Error).message, config_version: this.applied.version }, `${what}: version ${this.applied.version} keeps serving; retrying every ${this.pollMs} ms`)
      this.reachable = false
    }
  }

  /** Without LISTEN (a pooler that refuses it, the connection limit) the poll still finds each push. Resolves the failure of a try. */
  private async listen (): Promise<Error | undefined> {
    if (Date.now() < this.listenDueAt) return undefined
    try {
      await this.listener.ensure()
      if (this.listenWarned) this.logger.info('config store: listening for pushes again')
      this.listenWarned = false
      return undefined
    } catch (error) {
      this.listenDueAt = Date.now() + this.listenRetryMs
      return error as Error
    }
  }

  private warnNoListen (error: Error): void {
    if (!this.listenWarned) this.logger.warn({ err_message: error.message }, `config store: cannot LISTEN for pushes; reading the head every ${this.pollMs} ms, trying LISTEN again every ${this.listenRetryMs / 1000} s`)
    this.listenWarned = true
  }

  private async applyVersion (from: ConfigStore, head: number): Promise<void> {
    const version = await from.get(head)
    if (version === undefined) return
    // Validated and swapped in as a reload of the file is (the plugins loaded at start, onReload told): one at a time.
    // The reload logs the outcome, in this label's words: one line per apply or refusal.
    const label: ReloadLabel = {
      fields: { config_version: version.version, sha256: version.sha256, author: version.author, running_version: this.applied.version },
      applied: `config version ${version.version} (by ${version.author}: ${version.message}) applied`,
      rejected: (error) => `config version ${version.version} (by ${version.author}) refused on this host, version ${this.applied.version} keeps serving: ${reasonOf(error)}`,
    }
    const result = await this.options.gateway.applyText(version.text, storedFileName(this.options.baseDir, version.version), label)
    if (result.outcome !== 'rejected') {
      this.applied = version
      this.appliedAt = Date.now()
      this.refused = undefined
      this.options.onApplied?.(this.state())
      await this.saveCopy(version)
    } else {
      this.refused = { version: version.version, reason: reasonOf(result.error), at: Date.now() }
      this.options.onRefused?.(this.state())
    }
    this.lastReport = 0
  }

  private async report (to: ConfigStore): Promise<void> {
    // Once per process, not on every open: read-only commands and the start's own open leave the table alone.
    if (!this.forgotGone) {
      await to.forgetGone()
      this.forgotGone = true
    }
    await to.report({ ...this.identity, applied: { version: this.applied.version, sha256: this.applied.sha256, at: this.appliedAt }, refused: this.refused })
    this.lastReport = Date.now()
  }

  private async saveCopy (version: ConfigVersion): Promise<void> {
    try {
      await saveOfflineCopy(this.options.dataDir, version)
    } catch (error) {
      this.logger.warn({ err_message: (error as Error).message, config_version: version.version }, 'config store: cannot save the offline copy of the applied version')
    }
  }
}

/** Why a version was refused, in one line: its problems, or the error's message. */
function reasonOf (error: Error): string {
  return error instanceof ConfigError ? error.problems.map((p) => `${p.path || '(root)'}: ${p.message}`).join('; ') : error.message
}

/** This process in the instances table: the started process's host and pid, and which worker (0: a single process). */
function processIdentity (): Omit<InstanceReport, 'applied' | 'refused'> {
  const worker = isLanegateWorker() ? cluster.worker?.id ?? 0 : 0
  const startedPid = worker === 0 ? process.pid : process.ppid
  return { instanceId: `${hostname()}:${startedPid}`, worker, host: hostname(), pid: process.pid, startedAt: Date.now() }
}
