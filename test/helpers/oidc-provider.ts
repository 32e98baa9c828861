import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import Provider from 'oidc-provider'

/** The resource whose access tokens the provider issues as JWTs, and the one it issues opaque tokens for. */
export const jwtResource = 'https://api.shop.test'
export const opaqueResource = 'https://opaque.shop.test'
export const providerScopes = 'orders.read orders.write'

/** A real OpenID provider (node-oidc-provider) on port 0, its signing key made at run time. */
export interface TestProvider {
  readonly issuer: string
  readonly discoveryUrl: string
  readonly introspectionUrl: string
  /** The provider's public signing key (its JWKS has only this one), and its private half (to forge variants). */
  readonly publicJwk: JWK
  readonly privateJwk: JWK
  /** A client-credentials access token of `client` (shop-app by default) for `resource`. */
  token (resource: string, scope?: string, client?: readonly [string, string]): Promise<string>
  /** Requests the provider answered, by path (`/jwks`, `/token/introspection`, ...). */
  hits (path: string): number
  close (): Promise<void>
}

/** The client allowed to introspect tokens (the gateway's own client at the provider). */
export const introspector = { id: 'lanegate', secret: 'lanegate-introspection-secret' }
export const shopApp = ['shop-app', 'shop-app-secret'] as const
export const otherApp = ['other-app', 'other-app-secret'] as const

export async function startTestProvider (): Promise<TestProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const kid = `provider-${Math.random().toString(36).slice(2)}`
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' }
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const client = (id: string, secret: string) => ({ client_id: id, client_secret: secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: providerScopes })
  const provider = new Provider(issuer, {
    clients: [client(...shopApp), client(...otherApp), { ...client(introspector.id, introspector.secret), grant_types: [] }],
    jwks: { keys: [privateJwk] },
    scopes: providerScopes.split(' '),
    ttl: { ClientCredentials: 600 },
    // The organization a token belongs to, as a claim of the provider's own naming.
    extraTokenClaims: () => ({ tenant: 'org_parent' }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: (ctx: { oidc: { client: { clientId: string } } }) => ctx.oidc.client.clientId === introspector.id },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: providerScopes,
          audience: resource,
          accessTokenFormat: resource === opaqueResource ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  })
  const counts = new Map<string, number>()
  const handle = provider.callback()
  server.on('request', (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname
    counts.set(path, (counts.get(path) ?? 0) + 1)
    handle(req, res)
  })
  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    introspectionUrl: `${issuer}/token/introspection`,
    publicJwk,
    privateJwk,
    async token (resource, scope = 'orders.read', [id, secret] = shopApp) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }).toString(),
      })
      const body = await res.json() as { access_token?: string }
      if (res.status !== 200 || body.access_token === undefined) throw new Error(`the provider refused a token: ${res.status} ${JSON.stringify(body)}`)
      return body.access_token
    },
    hits: (path) => counts.get(path) ?? 0,
    async close () {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
