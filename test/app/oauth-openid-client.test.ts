import { rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as client from 'openid-client'
import { buildOauthApp, type OauthApp } from '../helpers/oauth-app.js'
import { buildOauthConfig, SECRETS } from '../helpers/oauth-config.js'

/**
 * The issuer on a real socket, driven by an unmodified openid-client v6: RFC 8414 discovery (which checks that
 * the metadata's issuer equals the URL it was discovered from), then the client-credentials grant, then jose's
 * remote JWKS on the served jwks_uri to verify the token.
 */
const config = await buildOauthConfig()
t.teardown(() => rm(config.server.data_dir, { recursive: true, force: true }))

async function listening (t: { teardown (fn: () => unknown): void }): Promise<{ built: OauthApp, issuer: string }> {
  const built = await buildOauthApp({ config })
  t.teardown(() => built.close())
  await built.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = built.app.server.address() as AddressInfo
  const issuer = `http://127.0.0.1:${port}`
  built.setConfig({ ...config, issuer: { ...config.issuer, issuer } })
  return { built, issuer }
}

async function verify (token: string, jwksUri: string, issuer: string) {
  const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(jwksUri)), {
    algorithms: ['EdDSA'], typ: 'at+jwt', issuer, audience: 'lanegate', requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
  })
  return { payload, protectedHeader }
}

t.test('openid-client discovery + clientCredentialsGrant (client_secret_post); the token verifies against the served JWKS', async (t) => {
  const { built, issuer } = await listening(t)
  const configuration = await client.discovery(new URL(issuer), 'content-reader', SECRETS.content, undefined, {
    algorithm: 'oauth2', execute: [client.allowInsecureRequests],
  })
  const metadata = configuration.serverMetadata()
  t.equal(metadata.issuer, issuer)
  t.equal(metadata.token_endpoint, `${issuer}/oauth/token`)
  const tokens = await client.clientCredentialsGrant(configuration, { scope: 'engage:content.view' })
  t.equal(tokens.token_type, 'bearer', 'openid-client lower-cases token_type')
  t.equal(tokens.expires_in, 86400)
  t.equal(tokens.scope, 'engage:content.view')
  const { payload, protectedHeader } = await verify(tokens.access_token, metadata.jwks_uri as string, issuer)
  t.equal(protectedHeader.kid, built.keys.signing.kid)
  t.match(payload, { iss: issuer, sub: 'content-reader', client_id: 'content-reader', scopes: ['engage:content.view'], token_type: 'service' })
})

t.test('openid-client with client_secret_basic and a secret containing : % + and a space', async (t) => {
  const { issuer } = await listening(t)
  const configuration = await client.discovery(new URL(issuer), 'special', undefined, client.ClientSecretBasic(SECRETS.special), {
    algorithm: 'oauth2', execute: [client.allowInsecureRequests],
  })
  const tokens = await client.clientCredentialsGrant(configuration)
  t.equal(tokens.scope, 'engage:content.view engage:circulars.view')
  const { payload } = await verify(tokens.access_token, configuration.serverMetadata().jwks_uri as string, issuer)
  t.equal(payload.sub, 'special')
})

t.test('openid-client surfaces the OAuth error of a wrong secret', async (t) => {
  const { issuer } = await listening(t)
  const configuration = await client.discovery(new URL(issuer), 'content-reader', 'wrong-secret', undefined, {
    algorithm: 'oauth2', execute: [client.allowInsecureRequests],
  })
  await t.rejects(client.clientCredentialsGrant(configuration), { name: 'ResponseBodyError', error: 'invalid_client', error_description: 'Client authentication failed.', status: 401 })
})
