import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import pg from 'pg'
import { gatewayFixture, type GatewayFixture } from './gateway-fixture.js'
import { TEST_POSTGRES_URL } from './payments-config.js'
import { repoPath } from './paths.js'

/** The shared Redis of the common brief (never flushed: tests use a key prefix of their own). */
export const TEST_REDIS_URL = process.env.LANEGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * Whether the shared PostgreSQL and Redis answer. Resolves a reason to skip when they do not; with
 * LANEGATE_REQUIRE_SERVICES=1 (CI) it throws instead, so the suite fails rather than skips.
 */
export async function servicesUnavailable (): Promise<string | undefined> {
  let reason: string | undefined
  const probe = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await probe.connect()
  } catch (error) {
    reason = `PostgreSQL unreachable at ${TEST_POSTGRES_URL}: ${(error as Error).message}`
  } finally {
    await probe.end().catch(() => {})
  }
  if (reason === undefined) {
    const { Redis } = await import('ioredis')
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 })
    redis.on('error', () => {})
    try {
      await redis.connect()
      await redis.ping()
    } catch (error) {
      reason = `Redis unreachable at ${TEST_REDIS_URL}: ${(error as Error).message}`
    } finally {
      redis.disconnect()
    }
  }
  if (reason !== undefined && process.env.LANEGATE_REQUIRE_SERVICES === '1') throw new Error(reason)
  return reason
}

/** Drops a PostgreSQL schema this test run created. */
export async function dropSchema (schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } finally {
    await client.end()
  }
}

/** A name unique to this run, usable as a PostgreSQL schema and a Redis key prefix. */
export function runName (what: string): string {
  return `lg_${what}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
}

/**
 * Writes docker/gateway.cluster.yaml — the file compose mounts and `npm run cluster` serves — into `dir`, with
 * only what a test must change: the loopback as trusted proxy (so a test picks its client IP with
 * X-Forwarded-For) and short fan-out timings. URLs, schema, prefix, data_dir and lanes come from the environment
 * the file itself reads (see `clusterEnv`).
 */
export async function writeClusterConfig (dir: string, edit: (fixture: GatewayFixture) => GatewayFixture = (x) => x): Promise<string> {
  const fixture = gatewayFixture('cluster')
    .set('server.trusted_proxies', ['127.0.0.1'])
    .set('services.fanout.commit_wait_ms', 3000)
    .set('services.fanout.recovery', { lease_ms: 1000, sweep_interval_ms: 100 })
    .set('services.fanout.retry', { attempts: 3, base_delay_ms: 20, max_delay_ms: 100 })
  const file = join(dir, 'gateway.cluster.yaml')
  await writeFile(file, edit(fixture).text())
  return file
}

/** The admin bearer token tests give the cluster config's instances (LANEGATE_ADMIN_TOKEN). */
export const CLUSTER_ADMIN_TOKEN = 'cluster-test-admin-token-0123456789'

/** The environment docker/gateway.cluster.yaml reads, pointed at this run's own schema, prefix and folders. */
export function clusterEnv (options: { schema: string, prefix: string, dataDir: string, redisUrl?: string, lanes?: Record<string, string> }): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: TEST_POSTGRES_URL,
    REDIS_URL: options.redisUrl ?? TEST_REDIS_URL,
    LANEGATE_POSTGRES_SCHEMA: options.schema,
    LANEGATE_REDIS_PREFIX: options.prefix,
    LANEGATE_DATA_DIR: options.dataDir,
    // The file sits in a temporary folder here; its relative default (../content) would point next to it.
    LANEGATE_CONTENT_DIR: repoPath('content'),
    // The file's admin listener asks for this bearer token (admin.auth.token_env).
    LANEGATE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
    ...options.lanes,
  }
}
