import t from 'tap'
import { buildIndexes } from '../../src/config/indexes.js'
import { createClientAuthenticator, type ClientSlot } from '../../src/oauth/client-auth.js'
import { verifySecret, type ParsedSecretHash } from '../../src/secrets/secret-hash.js'
import { buildOauthConfig, SECRETS } from '../helpers/oauth-config.js'

const config = await buildOauthConfig()
const indexes = buildIndexes(config)
const content = (clientSecret: string) => ({ method: 'client_secret_post' as const, clientId: 'content-reader', clientSecret })

/** An authenticator counting its scrypt runs, on a clock the test moves. */
function counted (options: { cacheTtlMs?: number } = {}) {
  const clock = { now: 1_000_000 }
  const calls: string[] = []
  const auth = createClientAuthenticator({
    ...options,
    now: () => clock.now,
    verify: (secret: string, hash: ParsedSecretHash) => { calls.push(secret); return verifySecret(secret, hash) },
  })
  return { auth, calls, clock }
}

t.test('a secret verified before answers at once, without a promise: from the success cache, then from the slot', async (t) => {
  const { auth, calls } = counted()
  const slot: ClientSlot = {}
  const first = auth.authenticate(content(SECRETS.content), indexes, slot)
  t.ok(first instanceof Promise, 'first seen: scrypt, through a promise')
  t.equal((await first).client_id, 'content-reader')
  const cached = auth.authenticate(content(SECRETS.content), indexes)
  t.notOk(cached instanceof Promise, 'the success cache answers at once')
  t.equal((cached as { client_id: string }).client_id, 'content-reader')
  const slotted = auth.authenticate(content(SECRETS.content), indexes, slot)
  t.notOk(slotted instanceof Promise, 'the slot answers at once')
  t.equal((slotted as { client_id: string }).client_id, 'content-reader')
  t.same(calls, [SECRETS.content], 'one scrypt run in all')
})

t.test('a slot holding one secret does not let another through', async (t) => {
  const { auth } = counted()
  const slot: ClientSlot = {}
  await auth.authenticate(content(SECRETS.content), indexes, slot)
  await t.rejects(async () => auth.authenticate(content('wrong'), indexes, slot), { code: 'invalid_client', message: 'Client authentication failed.' })
  await t.rejects(async () => auth.authenticate({ ...content(SECRETS.content), clientId: 'checkout' }, indexes, slot), { code: 'invalid_client' },
    'another client id with the slot\'s secret')
})

t.test('a secret removed from the config stops working on a connection whose slot holds it', async (t) => {
  const { auth } = counted()
  const slot: ClientSlot = {}
  const rotating = { method: 'client_secret_post' as const, clientId: 'rotating', clientSecret: SECRETS.rotatingOld }
  t.equal((await auth.authenticate(rotating, indexes, slot)).client_id, 'rotating')
  const account = config.service_accounts.find((a) => a.client_id === 'rotating')!
  const after = buildIndexes({ ...config, service_accounts: [{ ...account, secrets: account.secrets.slice(1) }] })
  await t.rejects(async () => auth.authenticate(rotating, after, slot), { code: 'invalid_client', message: 'Client authentication failed.' })
})

t.test('a revoked client answered from its slot is still refused', async (t) => {
  const { auth } = counted()
  const slot: ClientSlot = {}
  const revoked = { method: 'client_secret_post' as const, clientId: 'revoked', clientSecret: SECRETS.revoked }
  await t.rejects(async () => auth.authenticate(revoked, indexes, slot), { code: 'invalid_client', message: 'The client has been revoked.' })
  t.throws(() => auth.authenticate(revoked, indexes, slot), { code: 'invalid_client', message: 'The client has been revoked.' }, 'at once the second time')
})

t.test('a slot expires with the success cache entry it was filled from: then scrypt runs again', async (t) => {
  const { auth, calls, clock } = counted({ cacheTtlMs: 60_000 })
  const slot: ClientSlot = {}
  await auth.authenticate(content(SECRETS.content), indexes, slot)
  clock.now += 30_000
  t.notOk(auth.authenticate(content(SECRETS.content), indexes) instanceof Promise, 'the cache answers within the entry\'s time')
  clock.now += 29_000
  t.notOk(auth.authenticate(content(SECRETS.content), indexes, slot) instanceof Promise, 'so does the slot')
  clock.now += 2_000
  const again = auth.authenticate(content(SECRETS.content), indexes, slot)
  t.ok(again instanceof Promise, 'both expired together: verified again')
  t.equal((await again).client_id, 'content-reader')
  t.same(calls, [SECRETS.content, SECRETS.content])
})
