import t from 'tap'
import { explainRequest } from '../../src/describe/explain.js'
import { getToken } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

/**
 * `lanegate explain` reasons about a route without sending anything; here its verdicts are checked against what the
 * whole gateway answers the same requests with a real token of the same client. The config leaves cancel_intent
 * unlisted (mounted, so its path's other methods answer 405, but not served: 404).
 */
t.test('explain\'s verdict is the status the gateway answers', async (t) => {
  const gw = await gatewayFixture().delete('services.payments.routes.cancel_intent').boot(t)
  const { config } = gw.gateway.current()
  const cases: [client: string, method: string, url: string, expected: number][] = [
    ['demo-status', 'POST', '/api/v1/ecommerce/payment-intents', 403],
    ['demo-status', 'DELETE', '/api/v1/ecommerce/payment-intents', 405],
    ['demo-checkout', 'POST', '/api/v1/ecommerce/payment-intents/pi_1/cancel', 404],
    ['demo-checkout', 'GET', '/api/v1/ecommerce/payment-intents/pi_1/cancel', 405],
    ['demo-checkout', 'GET', '/api/v1/ecommerce/Payment-Intents/pi_1', 404],
    ['demo-other', 'GET', '/v1/stores/org_store_001/live/x', 404],
    ['demo-content', 'GET', '/v1/hq/timeseries/sales', 403],
    ['demo-content', 'POST', '/v1/stores/org_store_001/live/x/', 403],
  ]
  for (const [client, method, url, expected] of cases) {
    const explained = explainRequest(config, gw.gateway.catalog, method, url, { kind: 'client', clientId: client })
    const token = await getToken(gw.app, client)
    const res = await gw.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` } })
    t.same({ explained: explained.result.status, answered: res.statusCode }, { explained: expected, answered: expected }, `${client} ${method} ${url}`)
  }
  // A chain that passes: explain can only say it depends on the rate limit's counter; the handler answers 200.
  const passing = explainRequest(config, gw.gateway.catalog, 'GET', '/api/v1/ecommerce/config/processor', { kind: 'client', clientId: 'demo-checkout' })
  t.same(passing.result, { outcome: 'depends' })
  const token = await getToken(gw.app, 'demo-checkout')
  t.equal((await gw.app.inject({ method: 'GET', url: '/api/v1/ecommerce/config/processor', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
})
