import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { NewPaymentIntent, Store } from '../../src/store/store.js'
import { createSqliteStore, sqliteMigrations } from '../../src/store/sqlite/create-sqlite-store.js'
import { postgresBackend, sqliteBackend, type StoreBackend } from '../helpers/payments-config.js'

const HOUR = 3600_000
const OWNER = 'org_hq'
const VISIBLE = new Set([OWNER, 'org_store_1'])
const OTHERS = new Set(['org_other'])

let counter = 0
function newIntent (overrides: Partial<NewPaymentIntent> = {}): NewPaymentIntent {
  counter++
  const id = `pi_TEST${String(counter).padStart(6, '0')}`
  return {
    id,
    ownerOrgId: OWNER,
    clientId: 'svc-hq',
    amount: 1999,
    currency: 'usd',
    captureMethod: 'automatic',
    description: 'Order 42',
    metadata: { order: '42' },
    organizationId: 'org_store_1',
    connectedAccountId: 'acct_store_1',
    destination: 'acct_1Store',
    clientSecret: `${id}_secret_abc`,
    createdAt: 1_700_000_000_000,
    ...overrides,
  }
}

const scope = (key: string, clientId = 'client-a', route = 'create_intent') => ({ clientId, route, key })
const beginOptions = (fingerprint: string, now = 1_700_000_000_000) => ({ fingerprint, now, ttlMs: 24 * HOUR, abandonAfterMs: 60_000 })

/** The contract every Store implementation passes. */
function contract (t: Test, backend: StoreBackend): void {
  let store: Store
  t.before(async () => { store = await backend.open() })
  t.teardown(async () => { await store.close(); await backend.destroy() })

  t.test('payments: create returns the stored intent and get reads it back', async (t) => {
    const input = newIntent()
    const created = await store.payments.create(input)
    const expected = { ...input, status: 'requires_payment_method', canceledAt: null, cancellationReason: null }
    t.same(created, expected)
    t.same(await store.payments.get(input.id, VISIBLE), expected)
    t.same(await store.payments.events(input.id), [{ intentId: input.id, fromStatus: null, toStatus: 'requires_payment_method', at: input.createdAt }])
  })

  t.test('payments: another organization reads undefined, like an unknown id', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    t.equal(await store.payments.get(input.id, OTHERS), undefined)
    t.equal(await store.payments.get('pi_unknown', VISIBLE), undefined)
  })

  t.test('payments: a duplicate id is rejected', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    await t.rejects(store.payments.create(input))
  })

  t.test('payments: transition from an allowed state updates and records an event', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    const result = await store.payments.transition(input.id, VISIBLE, { from: ['requires_payment_method'], to: 'canceled', at: input.createdAt + 5, cancellationReason: 'duplicate' })
    t.same(result, { outcome: 'updated', intent: { ...input, status: 'canceled', canceledAt: input.createdAt + 5, cancellationReason: 'duplicate' } })
    t.same((await store.payments.events(input.id)).map((e) => [e.fromStatus, e.toStatus, e.at]),
      [[null, 'requires_payment_method', input.createdAt], ['requires_payment_method', 'canceled', input.createdAt + 5]])
  })

  t.test('payments: transition to a non-canceled state leaves the cancellation fields null', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    const result = await store.payments.transition(input.id, VISIBLE, { from: ['requires_payment_method'], to: 'succeeded', at: input.createdAt + 1 })
    t.same(result, { outcome: 'updated', intent: { ...input, status: 'succeeded', canceledAt: null, cancellationReason: null } })
  })

  t.test('payments: transition from another state is a conflict carrying the current status', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    await store.payments.transition(input.id, VISIBLE, { from: ['requires_payment_method'], to: 'succeeded', at: 1 })
    t.same(await store.payments.transition(input.id, VISIBLE, { from: ['requires_payment_method'], to: 'canceled', at: 2 }), { outcome: 'conflict', status: 'succeeded' })
    t.equal((await store.payments.events(input.id)).length, 2)
  })

  t.test('payments: a change repeated under the same idempotencyRef is already_applied; another ref (or none) is a conflict', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    const change = { from: ['requires_payment_method'] as const, to: 'canceled' as const, at: input.createdAt + 5, cancellationReason: 'duplicate' as const }
    const canceled = { ...input, status: 'canceled', canceledAt: input.createdAt + 5, cancellationReason: 'duplicate' }
    t.same(await store.payments.transition(input.id, VISIBLE, { ...change, idempotencyRef: 'ref-1' }), { outcome: 'updated', intent: canceled })
    t.same(await store.payments.transition(input.id, VISIBLE, { ...change, at: input.createdAt + 9, idempotencyRef: 'ref-1' }), { outcome: 'already_applied', intent: canceled })
    t.same(await store.payments.transition(input.id, VISIBLE, { ...change, idempotencyRef: 'ref-2' }), { outcome: 'conflict', status: 'canceled' })
    t.same(await store.payments.transition(input.id, VISIBLE, change), { outcome: 'conflict', status: 'canceled' })
    t.same(await store.payments.transition(input.id, OTHERS, { ...change, idempotencyRef: 'ref-1' }), { outcome: 'not_found' })
    t.equal((await store.payments.events(input.id)).length, 2, 'one cancel event')
  })

  t.test('payments: transition of an invisible or unknown intent is not_found and changes nothing', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    t.same(await store.payments.transition(input.id, OTHERS, { from: ['requires_payment_method'], to: 'canceled', at: 2 }), { outcome: 'not_found' })
    t.same(await store.payments.transition('pi_nope', VISIBLE, { from: ['requires_payment_method'], to: 'canceled', at: 2 }), { outcome: 'not_found' })
    t.equal((await store.payments.get(input.id, VISIBLE))?.status, 'requires_payment_method')
  })

  t.test('payments: 20 concurrent cancels → exactly one update, 19 conflicts seeing canceled', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    // A second connection too, so PostgreSQL really runs them on different sessions.
    const other = await backend.open()
    t.teardown(() => other.close())
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : other).payments.transition(
      input.id, VISIBLE, { from: ['requires_payment_method', 'requires_capture'], to: 'canceled', at: 10 + i })))
    t.equal(results.filter((r) => r.outcome === 'updated').length, 1)
    t.same(results.filter((r) => r.outcome !== 'updated'), Array.from({ length: 19 }, () => ({ outcome: 'conflict', status: 'canceled' })))
    t.equal((await store.payments.events(input.id)).length, 2)
  })

  t.test('idempotency: first begin is new; again with the same fingerprint is in_progress', async (t) => {
    t.same(await store.idempotency.begin(scope('k1'), beginOptions('fp1')), { state: 'new' })
    t.same(await store.idempotency.begin(scope('k1'), beginOptions('fp1')), { state: 'in_progress' })
  })

  t.test('idempotency: a different fingerprint is a mismatch, running or completed', async (t) => {
    await store.idempotency.begin(scope('k2'), beginOptions('fp1'))
    t.same(await store.idempotency.begin(scope('k2'), beginOptions('fp2')), { state: 'mismatch' })
    await store.idempotency.complete(scope('k2'), { statusCode: 201, body: { ok: true } }, 5)
    t.same(await store.idempotency.begin(scope('k2'), beginOptions('fp2')), { state: 'mismatch' })
  })

  t.test('idempotency: completed returns the stored response', async (t) => {
    await store.idempotency.begin(scope('k3'), beginOptions('fp1'))
    const body = { success: true, data: { id: 'pi_1', nested: { a: [1, 'two', null] } } }
    await store.idempotency.complete(scope('k3'), { statusCode: 201, body }, 5)
    t.same(await store.idempotency.begin(scope('k3'), beginOptions('fp1')), { state: 'completed', response: { statusCode: 201, body } })
  })

  t.test('idempotency: keys are scoped per client id and per route', async (t) => {
    await store.idempotency.begin(scope('k4'), beginOptions('fp1'))
    t.same(await store.idempotency.begin(scope('k4', 'client-b'), beginOptions('fp1')), { state: 'new' })
    t.same(await store.idempotency.begin(scope('k4', 'client-a', 'cancel_intent'), beginOptions('fp1')), { state: 'new' })
  })

  t.test('idempotency: release forgets an in_progress key; a completed key is not released', async (t) => {
    await store.idempotency.begin(scope('k5'), beginOptions('fp1'))
    await store.idempotency.release(scope('k5'))
    t.same(await store.idempotency.begin(scope('k5'), beginOptions('fp2')), { state: 'new' })
    await store.idempotency.complete(scope('k5'), { statusCode: 201, body: { n: 1 } }, 5)
    await store.idempotency.release(scope('k5'))
    t.same(await store.idempotency.begin(scope('k5'), beginOptions('fp2')), { state: 'completed', response: { statusCode: 201, body: { n: 1 } } })
  })

  t.test('idempotency: a key is kept for the ttl and forgotten after it', async (t) => {
    const start = 1_700_000_000_000
    await store.idempotency.begin(scope('k6'), beginOptions('fp1', start))
    await store.idempotency.complete(scope('k6'), { statusCode: 201, body: { n: 1 } }, start)
    t.same(await store.idempotency.begin(scope('k6'), beginOptions('fp2', start + 24 * HOUR - 1)), { state: 'mismatch' })
    t.same(await store.idempotency.begin(scope('k6'), beginOptions('fp2', start + 24 * HOUR)), { state: 'new' })
  })

  t.test('idempotency: an in_progress key older than abandonAfterMs is taken over', async (t) => {
    const start = 1_700_000_000_000
    await store.idempotency.begin(scope('k7'), beginOptions('fp1', start))
    t.same(await store.idempotency.begin(scope('k7'), beginOptions('fp1', start + 59_999)), { state: 'in_progress' })
    t.same(await store.idempotency.begin(scope('k7'), beginOptions('fp1', start + 60_000)), { state: 'new' })
  })

  t.test('idempotency: 20 concurrent begins with one key → exactly one new', async (t) => {
    const other = await backend.open()
    t.teardown(() => other.close())
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : other).idempotency.begin(scope('k8'), beginOptions('fp1'))))
    t.equal(results.filter((r) => r.state === 'new').length, 1)
    t.equal(results.filter((r) => r.state === 'in_progress').length, 19)
  })

  t.test('durability: data written survives closing and reopening', async (t) => {
    const input = newIntent()
    await store.payments.create(input)
    await store.idempotency.begin(scope('k9'), beginOptions('fp1'))
    await store.idempotency.complete(scope('k9'), { statusCode: 201, body: { id: input.id } }, 5)
    const reopened = await backend.open()
    t.teardown(() => reopened.close())
    t.equal((await reopened.payments.get(input.id, VISIBLE))?.id, input.id)
    t.same(await reopened.idempotency.begin(scope('k9'), beginOptions('fp1')), { state: 'completed', response: { statusCode: 201, body: { id: input.id } } })
  })
}

t.test('sqlite store', async (t) => {
  contract(t, await sqliteBackend())
})

t.test('postgres store', async (t) => {
  const backend = await postgresBackend()
  if (typeof backend === 'string') {
    t.test('contract', { skip: `${backend} (set LANEGATE_REQUIRE_SERVICES=1 to fail instead)` }, async () => {})
    return
  }
  contract(t, backend)
})

t.test('sqlite: migrations are recorded once, reopening applies none, the file is in WAL mode', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-store-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'lanegate.db')
  await createSqliteStore(file).close()
  const store = createSqliteStore(file)
  t.teardown(() => store.close())
  const db = new Database(file, { readonly: true })
  t.teardown(() => db.close())
  const rows = db.prepare('SELECT id FROM lanegate_migrations ORDER BY rowid').all() as { id: string }[]
  t.same(rows.map((r) => r.id), sqliteMigrations.map((m) => m.id))
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
})
