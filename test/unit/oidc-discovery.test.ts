import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createDiscovery } from '../../src/auth/oidc-discovery.js'
import { waitFor } from '../helpers/wait-for.js'

/** A discovery endpoint whose answer the test changes; counts its hits. */
async function discoveryServer (t: Test, issuer: () => string) {
  let status = 200
  let jwksUri = 'https://idp.test/keys-1'
  let hits = 0
  const server = createServer((_req, res) => {
    hits += 1
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ issuer: issuer(), jwks_uri: jwksUri, introspection_endpoint: 'https://idp.test/introspect' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/openid-configuration`,
    hits: () => hits,
    set (next: { status?: number, jwksUri?: string }) { status = next.status ?? status; jwksUri = next.jwksUri ?? jwksUri },
  }
}

t.test('fetched once, reused, fetched again after refreshMs; a failed refresh keeps the document fetched before', async (t) => {
  const server = await discoveryServer(t, () => 'https://idp.test')
  const discover = createDiscovery({ refreshMs: 50, retryMs: 50 })
  const first = await Promise.all([discover(server.url, 'https://idp.test'), discover(server.url, 'https://idp.test')])
  t.same(first[0], { issuer: 'https://idp.test', jwks_uri: 'https://idp.test/keys-1', introspection_endpoint: 'https://idp.test/introspect' })
  t.equal(server.hits(), 1, 'two concurrent readers share one fetch')
  server.set({ jwksUri: 'https://idp.test/keys-2' })
  const refreshed = await waitFor(async () => (await discover(server.url, 'https://idp.test')).jwks_uri === 'https://idp.test/keys-2', { what: 'the refreshed document' })
  t.ok(refreshed)
  server.set({ status: 500 })
  const before = server.hits()
  await waitFor(() => server.hits() > before || discover(server.url, 'https://idp.test').then(() => server.hits() > before), { what: 'a refresh attempt' })
  t.same(await discover(server.url, 'https://idp.test'), { issuer: 'https://idp.test', jwks_uri: 'https://idp.test/keys-2', introspection_endpoint: 'https://idp.test/introspect' })
})

t.test('a document naming another issuer, or none fetched yet from a failing endpoint, is an error', async (t) => {
  const server = await discoveryServer(t, () => 'https://someone-else.test')
  const discover = createDiscovery({ retryMs: 60_000 })
  await t.rejects(discover(server.url, 'https://idp.test'), /names issuer https:\/\/someone-else.test, not https:\/\/idp.test/)
  await t.rejects(discover(server.url, 'https://idp.test'), /could not be fetched; next try/, 'no refetch before retryMs')
  t.equal(server.hits(), 1)
})
