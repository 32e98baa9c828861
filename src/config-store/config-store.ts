import { createHash } from 'node:crypto'
import pg from 'pg'
import { migratePostgres } from '../store/postgres/migrate.js'
import { withTransaction } from '../store/postgres/transaction.js'
import { ConfigStoreError, storeFailure } from './errors.js'
import { configStoreMigrations } from './migrations.js'

/** The channel a push notifies (payload: the new version): followers then read the head at once. */
export const CONFIG_CHANNEL = 'lanegate_config'

/** One immutable version of gateway.yaml. */
export interface ConfigVersion {
  version: number
  /** The head when it was pushed (null for the first version). */
  parent: number | null
  /** The YAML exactly as pushed (comments and `${ENV}` references kept). */
  text: string
  sha256: string
  author: string
  message: string
  /** With a rollback: the version whose text this one restores. */
  rollbackOf: number | null
  createdAt: number
}

export type VersionSummary = Omit<ConfigVersion, 'text'>

/** What one serving process (a single process, or one worker of `server.workers`) reports. */
export interface InstanceReport {
  instanceId: string
  /** 0 for a single process; the worker's number under `server.workers`. */
  worker: number
  host: string
  pid: number
  startedAt: number
  applied?: { version: number, sha256: string, at: number }
  refused?: { version: number, reason: string, at: number }
}

export interface InstanceRow extends InstanceReport {
  heartbeatAt: number
}

export interface PushRequest {
  text: string
  message: string
  author: string
  /** Refuse (`conflict`) unless the head is this version (0: the store is empty). */
  ifVersion?: number
  rollbackOf?: number
}

export interface ConfigStore {
  /** The newest version, or undefined when nothing was pushed yet. */
  head (): Promise<ConfigVersion | undefined>
  headVersion (): Promise<number>
  get (version: number): Promise<ConfigVersion | undefined>
  /** Newest first. */
  history (limit?: number): Promise<VersionSummary[]>
  /** Stores a new version (head + 1) and notifies the followers; `conflict` when `ifVersion` is not the head. */
  push (request: PushRequest): Promise<ConfigVersion>
  /** The instances heard from within `heardWithinMs` (default {@link LIVE_WITHIN_MS}), newest heartbeat first. */
  instances (heardWithinMs?: number): Promise<InstanceRow[]>
  /** Records a heartbeat (and what the process applied or refused). */
  report (report: InstanceReport): Promise<void>
  /** Deletes the rows of processes gone a week (each start adds a row per process). */
  forgetGone (): Promise<void>
  close (): Promise<void>
}

export function sha256 (text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** How long a query may wait for a connection: a store that is down fails a command or a poll quickly. */
const CONNECT_TIMEOUT_MS = 3_000

const VERSION_COLUMNS = 'version, parent, sha256, author, message, rollback_of, created_at'

/** A process whose last heartbeat is older than this counts as gone (three missed heartbeats). */
export const LIVE_WITHIN_MS = 15_000
/** Rows of processes gone this long are deleted by {@link ConfigStore.forgetGone}. */
const FORGET_AFTER_MS = 7 * 86_400_000

/** Connects to the store at `url` and creates its tables when missing. Throws `unreachable` or `failed` when it cannot. */
export async function openConfigStore (url: string): Promise<ConfigStore> {
  const pool = new pg.Pool({ connectionString: url, max: 3, connectionTimeoutMillis: CONNECT_TIMEOUT_MS })
  // A connection lost while idle must not end the process: the next query reports it.
  pool.on('error', () => {})
  pool.on('connect', function ignoreClientErrors (client) { client.on('error', () => {}) })
  try {
    await migratePostgres(pool, configStoreMigrations)
  } catch (error) {
    await pool.end().catch(() => {})
    throw storeFailure(url, error)
  }
  const query = async <R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(sql, values)
    } catch (error) {
      throw storeFailure(url, error)
    }
  }

  async function get (version: number): Promise<ConfigVersion | undefined> {
    const { rows } = await query<VersionRow>(`SELECT ${VERSION_COLUMNS}, text FROM lanegate_config_versions WHERE version = $1`, [version])
    return rows[0] === undefined ? undefined : { ...summary(rows[0]), text: rows[0].text }
  }

  async function headVersion (): Promise<number> {
    const { rows } = await query<{ head: number | null }>('SELECT max(version) AS head FROM lanegate_config_versions')
    return rows[0]?.head ?? 0
  }

  return {
    get,
    headVersion,
    head: async () => {
      const head = await headVersion()
      return head === 0 ? undefined : get(head)
    },
    history: async (limit = 50) => {
      const { rows } = await query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM lanegate_config_versions ORDER BY version DESC LIMIT $1`, [limit])
      return rows.map(summary)
    },
    push: async (request) => {
      try {
        return await withTransaction(pool, (client) => pushIn(client, request))
      } catch (error) {
        throw storeFailure(url, error)
      }
    },
    instances: async (heardWithinMs = LIVE_WITHIN_MS) => {
      const { rows } = await query<InstanceDbRow>(`SELECT * FROM lanegate_config_instances WHERE heartbeat_at > $1
        ORDER BY heartbeat_at DESC, instance_id, worker`, [Date.now() - heardWithinMs])
      return rows.map(instanceRow)
    },
    report: async (report) => {
      await query(`INSERT INTO lanegate_config_instances (instance_id, worker, host, pid, started_at, heartbeat_at,
          applied_version, applied_sha256, applied_at, refused_version, refused_reason, refused_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
        ON CONFLICT (instance_id, worker) DO UPDATE SET host = $3, pid = $4, started_at = $5, heartbeat_at = $6,
          applied_version = $7, applied_sha256 = $8, applied_at = $9, refused_version = $10, refused_reason = $11, refused_at = $12`, [
        report.instanceId, report.worker, report.host, report.pid, report.startedAt, Date.now(),
        report.applied?.version ?? null, report.applied?.sha256 ?? null, report.applied?.at ?? null,
        report.refused?.version ?? null, report.refused?.reason ?? null, report.refused?.at ?? null,
      ])
    },
    forgetGone: async () => {
      await query('DELETE FROM lanegate_config_instances WHERE heartbeat_at < $1', [Date.now() - FORGET_AFTER_MS])
    },
    close: () => pool.end(),
  }
}

/**
 * One push at a time (a transaction-scoped advisory lock): two pushes made with the same `ifVersion` are
 * serialized, and the second finds the head moved.
 */
async function pushIn (client: pg.PoolClient, request: PushRequest): Promise<ConfigVersion> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('lanegate:config-store:push'))")
  const { rows } = await client.query<{ head: number | null }>('SELECT max(version) AS head FROM lanegate_config_versions')
  const head = rows[0]?.head ?? 0
  if (request.ifVersion !== undefined && request.ifVersion !== head) {
    throw new ConfigStoreError('conflict', `the head is version ${head}, not ${request.ifVersion}: someone pushed meanwhile (pull, merge, push again)`, head)
  }
  const version: ConfigVersion = {
    version: head + 1,
    parent: head === 0 ? null : head,
    text: request.text,
    sha256: sha256(request.text),
    author: request.author,
    message: request.message,
    rollbackOf: request.rollbackOf ?? null,
    createdAt: Date.now(),
  }
  await client.query(`INSERT INTO lanegate_config_versions (version, parent, text, sha256, author, message, rollback_of, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [version.version, version.parent, version.text, version.sha256, version.author, version.message, version.rollbackOf, version.createdAt])
  // Delivered at COMMIT, so a follower that hears it reads the new head.
  await client.query('SELECT pg_notify($1, $2)', [CONFIG_CHANNEL, String(version.version)])
  return version
}

interface VersionRow {
  version: number
  parent: number | null
  text: string
  sha256: string
  author: string
  message: string
  rollback_of: number | null
  created_at: string
}

function summary (row: VersionRow): VersionSummary {
  return { version: row.version, parent: row.parent, sha256: row.sha256, author: row.author, message: row.message, rollbackOf: row.rollback_of, createdAt: Number(row.created_at) }
}

interface InstanceDbRow {
  instance_id: string
  worker: number
  host: string
  pid: number
  started_at: string
  heartbeat_at: string
  applied_version: number | null
  applied_sha256: string | null
  applied_at: string | null
  refused_version: number | null
  refused_reason: string | null
  refused_at: string | null
}

function instanceRow (row: InstanceDbRow): InstanceRow {
  return {
    instanceId: row.instance_id,
    worker: row.worker,
    host: row.host,
    pid: row.pid,
    startedAt: Number(row.started_at),
    heartbeatAt: Number(row.heartbeat_at),
    applied: row.applied_version === null ? undefined : { version: row.applied_version, sha256: row.applied_sha256 ?? '', at: Number(row.applied_at) },
    refused: row.refused_version === null ? undefined : { version: row.refused_version, reason: row.refused_reason ?? '', at: Number(row.refused_at) },
  }
}
