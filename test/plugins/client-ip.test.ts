import t from 'tap'
import rateLimit from '../../plugins/rate-limit/index.js'
import { addressKey } from '../../src/plugin/client-ip.js'
import { buildPolicyApp, tokenEnv } from '../helpers/token-app.js'

t.test('IPv4 addresses are their own key', async (tt) => {
  tt.equal(addressKey('203.0.113.7'), '203.0.113.7')
})

t.test('IPv6 addresses are keyed by their /64 whatever their spelling', async (tt) => {
  const cases = {
    '2001:db8:1:2::1': '2001:db8:1:2::/64',
    '2001:0DB8:0001:0002:FFFF:0:0:1': '2001:db8:1:2::/64',
    '2001:db8::': '2001:db8:0:0::/64',
    '::1': '0:0:0:0::/64',
    'fe80::1%eth0': 'fe80:0:0:0::/64',
    '64:ff9b::198.51.100.1': '64:ff9b:0:0::/64',
  }
  for (const [address, key] of Object.entries(cases)) tt.equal(addressKey(address), key, address)
})

t.test('IPv4-mapped IPv6 addresses are keyed as IPv4', async (tt) => {
  tt.equal(addressKey('::ffff:198.51.100.20'), '198.51.100.20')
  tt.equal(addressKey('::FFFF:c633:6414'), '198.51.100.20')
  tt.equal(addressKey('0:0:0:0:0:ffff:198.51.100.20'), '198.51.100.20')
})

t.test('a value that is not an address is used as it is', async (tt) => {
  tt.equal(addressKey('unknown'), 'unknown')
})

t.test('D2: X-Forwarded-For is believed only from a trusted proxy', async (tt) => {
  const { app } = buildPolicyApp({ env: await tokenEnv(), trustProxy: ['10.0.0.1'], routes: [{ url: '/small', chain: [[rateLimit, { limit: 'small' }]] }] })
  tt.teardown(() => app.close())
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) {
    statuses.push((await app.inject({ url: '/small', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': `198.51.100.${i}` } })).statusCode)
  }
  tt.same(statuses, [200, 200, 200, 200], 'each forwarded client has its own bucket behind the trusted proxy')
  const spoofed: number[] = []
  for (let i = 0; i < 4; i++) {
    spoofed.push((await app.inject({ url: '/small', remoteAddress: '192.0.2.9', headers: { 'x-forwarded-for': `198.51.100.${i}` } })).statusCode)
  }
  tt.same(spoofed, [200, 200, 200, 429], 'an untrusted peer is one bucket')
})
