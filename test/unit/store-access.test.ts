import type { FastifyReply, FastifyRequest } from 'fastify'
import t from 'tap'
import { gatewaySettings } from '../../src/config/gateway-settings.js'
import { storeReacher } from '../../src/pipeline/store-reacher.js'
import organization from '../../plugins/organization/index.js'
import { policyContext } from '../../src/plugin/context.js'
import { localConnectionSlots } from '../../src/plugin/connection-slots.js'
import type { LimiterHandle } from '../../src/plugin/limiter.js'
import type { TokenVerifierView } from '../../src/plugin/tokens.js'
import { buildIndexes } from '../../src/config/indexes.js'
import { deepFreeze } from '../../src/config/deep-freeze.js'
import type { RequestContext } from '../../src/runtime/request-context.js'
import type { Snapshot } from '../../src/runtime/snapshot.js'
import { storeAccessOf } from '../../src/runtime/store-access.js'
import { exchangeConfig, exchangeOrganizations, HQ, OTHER } from '../helpers/exchange-config.js'
import { testPrincipal } from '../helpers/service-modules-app.js'

// org_hq owns stores a, b (lanes), idle (install inactive, a lane), nolane (installed, no lane); its child
// org_region owns c (a lane); org_other owns x (a lane).
const config = exchangeConfig(exchangeOrganizations({ a: 'http://127.0.0.1:1', b: 'http://127.0.0.1:2', c: 'http://127.0.0.1:3', x: 'http://127.0.0.1:4' }), {})
const indexes = buildIndexes(config)

t.test('a store in the caller\'s tree with an active install and a lane: reachable, with that lane', async (t) => {
  const access = indexes.access(HQ, 'org_store_a')
  t.equal(access?.id, 'org_store_a')
  t.equal(access?.store?.id, 'org_store_a')
  t.equal(access?.store?.ownerId, HQ)
  t.equal(access?.lane?.base_url, 'http://127.0.0.1:1')
})

t.test('a descendant organization\'s store is reachable from the parent, not the other way round', async (t) => {
  t.equal(indexes.access(HQ, 'org_store_c')?.lane?.base_url, 'http://127.0.0.1:3')
  t.equal(indexes.access(HQ, 'org_region')?.id, 'org_region')
  t.equal(indexes.access('org_region', 'org_store_a'), undefined)
  t.equal(indexes.access('org_region', HQ), undefined)
})

t.test('an organization is reachable without a store or a lane; itself included', async (t) => {
  t.same(indexes.access(HQ, HQ), { id: HQ, store: undefined, lane: undefined })
})

t.test('a store caller reaches only itself', async (t) => {
  t.equal(indexes.access('org_store_a', 'org_store_a')?.lane?.base_url, 'http://127.0.0.1:1')
  t.equal(indexes.access('org_store_a', 'org_store_b'), undefined)
  t.equal(indexes.access('org_store_a', HQ), undefined)
})

t.test('inactive install or no lane: reachable store, but no lane serves it', async (t) => {
  const idle = indexes.access(HQ, 'org_store_idle')
  t.equal(idle?.store?.installActive, false)
  t.equal(idle?.lane, undefined)
  const nolane = indexes.access(HQ, 'org_store_nolane')
  t.equal(nolane?.store?.installActive, true)
  t.equal(nolane?.lane, undefined)
})

t.test('a foreign store and an unknown id get the same answer; so does an unknown caller', async (t) => {
  t.equal(indexes.access(HQ, 'org_store_x'), undefined)
  t.equal(indexes.access(HQ, 'org_store_nope'), undefined)
  t.equal(indexes.access('org_nope', 'org_store_a'), undefined)
  t.equal(indexes.access(OTHER, 'org_store_x')?.lane?.base_url, 'http://127.0.0.1:4')
})

t.test('laneOf: the lane serving a store for any caller; none for an organization, an idle store or an unknown id', async (t) => {
  t.equal(indexes.laneOf('org_store_x')?.base_url, 'http://127.0.0.1:4')
  t.equal(indexes.laneOf(HQ), undefined)
  t.equal(indexes.laneOf('org_store_idle'), undefined)
  t.equal(indexes.laneOf('org_store_nope'), undefined)
})

t.test('the answer is one object per id (asking allocates nothing)', async (t) => {
  t.equal(indexes.access(HQ, 'org_store_a'), indexes.access(HQ, 'org_store_a'))
  t.equal(indexes.access(HQ, 'org_store_a'), indexes.access('org_store_a', 'org_store_a'))
})

t.test('a frozen (validated) config is indexed once; an unfrozen one each time', async (t) => {
  t.not(buildIndexes(config), buildIndexes(config))
  const frozen = deepFreeze(structuredClone(config))
  t.equal(buildIndexes(frozen), buildIndexes(frozen))
})

t.test('storeAccessOf reads the organization policy\'s recorded answer for the same id, else asks the rule', async (t) => {
  const snapshot: Snapshot = { version: 1, config, indexes, chains: new Map() }
  const gw: RequestContext = { snapshot, service: 'live', routeId: 'read', envelope: 'exchange', principal: testPrincipal(HQ) }
  t.equal(storeAccessOf(gw, 'org_store_x'), undefined, 'no recorded answer: the rule refuses a foreign store')
  t.equal(storeAccessOf(gw, 'org_store_a'), indexes.access(HQ, 'org_store_a'))
  const recorded = { id: 'org_store_b', store: undefined, lane: undefined }
  gw.reached = recorded
  t.equal(storeAccessOf(gw, 'org_store_b'), recorded, 'the recorded answer for the same id is used as is')
  t.equal(storeAccessOf(gw, 'org_store_x'), undefined, 'a recorded answer for another id is not')
  t.equal(storeAccessOf({ snapshot, service: 'live', routeId: 'read', envelope: 'exchange' }, 'org_store_a'), undefined, 'no principal: nothing')
})

t.test('the organization policy records the rule\'s answer on the request; a refusal records nothing', async (t) => {
  const snapshot: Snapshot = { version: 1, config, indexes, chains: new Map() }
  const context = policyContext(organization, {
    settings: gatewaySettings(config), reachStore: storeReacher(indexes), tokens: {} as TokenVerifierView, apiKeys: {} as never, limiter: () => ({}) as LimiterHandle, connectionSlots: localConnectionSlots(), service: 'live', routeId: 'read', envelope: 'exchange',
  })
  const step = organization.create({ param: 'store_org_id', not_found: true }, context)
  const requestFor = (storeId: string) => ({
    params: { store_org_id: storeId },
    gw: { snapshot, service: 'live', routeId: 'read', envelope: 'exchange', principal: testPrincipal(HQ) } as RequestContext,
  }) as unknown as FastifyRequest
  const passing = requestFor('org_store_a')
  t.equal(await step(passing, {} as FastifyReply), undefined)
  t.equal(passing.gw.reached, indexes.access(HQ, 'org_store_a'))
  for (const id of ['org_store_x', 'org_store_idle', 'org_store_nolane']) {
    const refused = requestFor(id)
    const outcome = await step(refused, {} as FastifyReply)
    t.equal((outcome as { code?: string } | undefined)?.code, 'store_not_found', id)
    t.equal(refused.gw.reached, undefined, id)
  }
})

t.test('without not_found, the organization policy records any id in the tree, lane or not; outside it, nothing', async (t) => {
  const snapshot: Snapshot = { version: 1, config, indexes, chains: new Map() }
  const context = policyContext(organization, {
    settings: gatewaySettings(config), reachStore: storeReacher(indexes), tokens: {} as TokenVerifierView, apiKeys: {} as never, limiter: () => ({}) as LimiterHandle, connectionSlots: localConnectionSlots(), service: 'live', routeId: 'read', envelope: 'exchange',
  })
  const step = organization.create({ query: 'organization_id', not_found: false }, context)
  const requestFor = (id: string) => ({
    query: { organization_id: id },
    gw: { snapshot, service: 'live', routeId: 'read', envelope: 'exchange', principal: testPrincipal(HQ) } as RequestContext,
  }) as unknown as FastifyRequest
  for (const id of [HQ, 'org_region', 'org_store_nolane']) {
    const passing = requestFor(id)
    t.equal(await step(passing, {} as FastifyReply), undefined, id)
    t.equal(passing.gw.reached, indexes.access(HQ, id), id)
  }
  const refused = requestFor('org_store_x')
  const outcome = await step(refused, {} as FastifyReply) as { code?: string, message?: string } | undefined
  t.same({ code: outcome?.code, message: outcome?.message }, { code: 'forbidden', message: 'This organization is outside your access.' })
  t.equal(refused.gw.reached, undefined)
})
