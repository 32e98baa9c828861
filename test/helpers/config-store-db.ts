import pg from 'pg'
import { TEST_POSTGRES_URL } from './payments-config.js'

/** A PostgreSQL database of this test's own on the shared server (LISTEN/NOTIFY stays within it), dropped by `drop`. */
export interface ConfigStoreDb {
  /** Connection URL of the new database. */
  url: string
  drop (): Promise<void>
}

/**
 * Creates `lg_cfg_<pid>_<random>` beside the test database. Resolves a reason string when PostgreSQL is
 * unreachable (the test skips); with LANEGATE_REQUIRE_SERVICES=1 it throws instead, so the suite fails.
 */
export async function configStoreDb (): Promise<ConfigStoreDb | string> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 })
  try {
    await admin.connect()
  } catch (error) {
    const reason = `PostgreSQL unreachable at ${TEST_POSTGRES_URL}: ${(error as Error).message}`
    if (process.env.LANEGATE_REQUIRE_SERVICES === '1') throw new Error(reason)
    return reason
  }
  const name = `lg_cfg_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(TEST_POSTGRES_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}
