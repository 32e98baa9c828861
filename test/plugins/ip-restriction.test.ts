import t from 'tap'
import ipRestriction from '../../plugins/ip-restriction/index.js'
import { testPolicy } from '../../src/pipeline/plugin-testing.js'

const refused = { error: 'ip_not_allowed', message: 'Requests from this address are not allowed on this route.' }

t.test('allow admits addresses in its IPv4 and IPv6 blocks and refuses others in the route\'s envelope', async (t) => {
  const harness = await testPolicy(ipRestriction, { allow: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'] }, { envelope: 'exchange' })
  t.teardown(harness.close)
  for (const ip of ['10.1.2.3', '2001:db8::1', '192.0.2.7', '::ffff:10.9.9.9']) {
    t.equal((await harness.inject({ url: '/test', remoteAddress: ip })).statusCode, 200, ip)
  }
  for (const ip of ['11.0.0.1', '2001:db9::1', '192.0.2.8']) {
    const res = await harness.inject({ url: '/test', remoteAddress: ip })
    t.same({ status: res.statusCode, body: res.json() }, { status: 403, body: refused }, ip)
  }
})

t.test('deny wins over allow', async (t) => {
  const harness = await testPolicy(ipRestriction, { allow: ['10.0.0.0/8'], deny: ['10.6.0.0/16'] })
  t.teardown(harness.close)
  t.equal((await harness.inject({ url: '/test', remoteAddress: '10.5.0.1' })).statusCode, 200)
  t.equal((await harness.inject({ url: '/test', remoteAddress: '10.6.0.1' })).statusCode, 403)
})

t.test('the payments envelope renders the refusal as {success:false, message}', async (t) => {
  const harness = await testPolicy(ipRestriction, { deny: ['0.0.0.0/0'] }, { envelope: 'payments' })
  t.teardown(harness.close)
  const res = await harness.inject({ url: '/test', remoteAddress: '203.0.113.1' })
  t.same({ status: res.statusCode, body: res.json() }, { status: 403, body: { success: false, message: refused.message } })
})

t.test('X-Forwarded-For counts only from server.trusted_proxies', async (t) => {
  const untrusted = await testPolicy(ipRestriction, { allow: ['198.51.100.0/24'] })
  t.teardown(untrusted.close)
  t.equal((await untrusted.inject({ url: '/test', remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '198.51.100.1' } })).statusCode, 403)
  const trusted = await testPolicy(ipRestriction, { allow: ['198.51.100.0/24'] }, {
    config: 'server: { trusted_proxies: [203.0.113.9] }\nissuer: { issuer: https://lanegate.test }\nscopes: {}\n',
  })
  t.teardown(trusted.close)
  t.equal((await trusted.inject({ url: '/test', remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '198.51.100.1' } })).statusCode, 200)
  t.equal((await trusted.inject({ url: '/test', remoteAddress: '203.0.113.10', headers: { 'x-forwarded-for': '198.51.100.1' } })).statusCode, 403)
})

t.test('a block that is not an address is refused by check()', async (t) => {
  await t.rejects(testPolicy(ipRestriction, { allow: ['10.0.0.0/33'] }), { message: 'policy "ip-restriction": allow/0: not an IP address or CIDR block: "10.0.0.0/33"' })
})
