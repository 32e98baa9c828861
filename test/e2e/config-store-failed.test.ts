import t from 'tap'
import { tmpdir } from 'node:os'
import fastify from 'fastify'
import pg from 'pg'
import { mountConfigStoreRoutes } from '../../src/config-store/admin-routes.js'
import { openConfigStore } from '../../src/config-store/config-store.js'
import { ConfigStoreError } from '../../src/config-store/errors.js'
import { configStoreDb } from '../helpers/config-store-db.js'
import { TEST_POSTGRES_URL } from '../helpers/payments-config.js'
import { repoPath } from '../helpers/paths.js'
import { runNode } from '../helpers/run-node.js'

// A store PostgreSQL answers with an error of its own (here: a role that may not create the store's tables) is
// `failed`, not `unreachable`: retrying will not help, and the operator must be told which grant is missing.

const db = await configStoreDb()
if (typeof db === 'string') {
  t.test('a store that answers with an error', { skip: `${db} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
} else {
  const role = `lg_noperm_${process.pid}`
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await admin.connect()
  await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'sekrit-pw'`)
  t.teardown(async () => {
    await db.drop()
    await admin.query(`DROP ROLE IF EXISTS ${role}`)
    await admin.end()
  })
  const url = new URL(db.url)
  url.username = role
  url.password = 'sekrit-pw'

  t.test('opening it is a `failed` store error with its SQLSTATE, not "unreachable"', async (t) => {
    const error = await openConfigStore(url.toString()).then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof ConfigStoreError)
    const { code, sqlstate } = error as ConfigStoreError
    t.same({ code, sqlstate }, { code: 'failed', sqlstate: '42501' })
    t.match((error as Error).message, /answered with an error: permission denied for schema public \(SQLSTATE 42501\)$/)
    t.notMatch((error as Error).message, /sekrit-pw/)
  })

  t.test('`lanegate config` exits 6 and says why; a store that cannot be reached still exits 4', async (t) => {
    const failed = await runNode(repoPath('bin/lanegate.js'), ['config', 'history', '--store', url.toString()])
    t.equal(failed.code, 6)
    t.match(failed.stderr, new RegExp(`^config: config store postgres://${role}:\\*\\*\\*@127\\.0\\.0\\.1:5432/\\w+ answered with an error: permission denied for schema public \\(SQLSTATE 42501\\)\\n$`))
    const down = await runNode(repoPath('bin/lanegate.js'), ['config', 'history', '--store', 'postgres://ops@127.0.0.1:1/x'])
    t.equal(down.code, 4)
  })

  t.test('the admin listener\'s store routes answer 500 config_store_failed with the SQLSTATE', async (t) => {
    const app = fastify()
    mountConfigStoreRoutes(app, { url: url.toString(), baseDir: tmpdir() })
    t.teardown(() => app.close())
    const res = await app.inject({ method: 'GET', url: '/config/versions' })
    t.same([res.statusCode, res.headers['cache-control'], res.json()], [500, 'no-store', {
      error: 'config_store_failed',
      sqlstate: '42501',
      message: 'The config store (PostgreSQL) answered with an error (a permission, a schema); the gateway\'s log and `sqlstate` say which.',
    }])
  })
}
