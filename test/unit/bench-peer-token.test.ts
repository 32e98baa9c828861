import { jwtVerify } from 'jose'
import t from 'tap'
import { expressGatewayToken } from '../../bench/scenarios.js'
import { EXPRESS_GATEWAY_JWT_SECRET } from '../../bench/servers/express-gateway-secret.js'

t.test('Express Gateway\'s jwt peer is sent a valid token as long as the gateway\'s, or one character longer', async (t) => {
  const secret = new TextEncoder().encode(EXPRESS_GATEWAY_JWT_SECRET)
  for (const length of [300, 301, 302, 303, 587]) {
    const token = await expressGatewayToken(length)
    t.ok(token.length === length || token.length === length + 1, `${length}: got ${token.length}`)
    const { payload } = await jwtVerify(token, secret)
    t.equal(payload.sub, 'bench')
  }
})
