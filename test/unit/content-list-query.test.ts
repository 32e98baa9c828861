import t from 'tap'
import { parseListQuery } from '../../src/services/content/list-query.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'

const settings = { source_dir: '/content', max_per_page: 100, default_per_page: 20, reload_check_ms: 1000 }

t.test('no parameters: the first page at the default size, as page=1 with the default per_page gives it', async (t) => {
  // The shortcut for a query without parameters answers what the checks give for the same page spelled out.
  t.same(parseListQuery({}, settings), { page: 1, perPage: 20 })
  t.same(parseListQuery(undefined, settings), { page: 1, perPage: 20 })
  t.same(parseListQuery({}, settings), parseListQuery({ page: '1', per_page: '20' }, settings))
  t.same(parseListQuery({ other: 'x' }, settings), { page: 1, perPage: 20 }, 'other parameters are ignored')
  t.same(Object.keys(parseListQuery({}, settings)), ['page', 'perPage'], 'no type key at all')
})

t.test('any one parameter goes through its checks', async (t) => {
  t.same(parseListQuery({ type: 'article' }, settings), { page: 1, perPage: 20, type: 'article' })
  t.same(parseListQuery({ page: '3' }, settings), { page: 3, perPage: 20 })
  t.same(parseListQuery({ per_page: '7' }, settings), { page: 1, perPage: 7 })
  for (const bad of [{ page: '0' }, { per_page: '101' }, { type: '' }, { page: ['1', '2'] }]) {
    t.throws(() => parseListQuery(bad, settings), GatewayError, JSON.stringify(bad))
  }
})
