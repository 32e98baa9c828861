import t from 'tap'
import { changedPaths } from '../../src/config/changed-paths.js'

t.test('changedPaths names the YAML paths two configs differ at, never their values', async (t) => {
  const before = {
    rate_limits: { ip: { key: 'ip', points: 5 }, client: { key: 'client', points: 600 } },
    service_accounts: [{ client_id: 'a', status: 'active', secrets: [{ created: '2026-11-01', hash: '$scrypt$old' }] }],
    services: { pricing: { routes: { list: [] } } },
  }
  const after = {
    rate_limits: { ip: { key: 'ip', points: 6 }, client: { key: 'client', points: 600 } },
    service_accounts: [{ client_id: 'a', status: 'revoked', secrets: [{ created: '2026-11-29', hash: '$scrypt$new' }] }],
    services: { pricing: { routes: { list: [], get: [] } }, live: {} },
  }
  t.same(changedPaths(before, after), [
    'rate_limits.ip.points',
    'service_accounts[0].status',
    'service_accounts[0].secrets[0].created',
    'service_accounts[0].secrets[0].hash',
    'services.pricing.routes.get',
    'services.live',
  ])
  t.same(changedPaths(before, after, 2), ['rate_limits.ip.points', 'service_accounts[0].status'], 'the first `limit`')
  t.same(changedPaths(before, structuredClone(before)), [], 'an equal config: nothing')
  t.same(changedPaths({ list: [1, 2] }, { list: [1, 2, 3] }), ['list'], 'a list that grew is named whole')
  t.equal(JSON.stringify(changedPaths(before, after)).includes('$scrypt$'), false, 'no value')
})
