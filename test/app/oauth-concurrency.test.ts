import t from 'tap'
import { jwtVerify } from 'jose'
import { buildOauthApp, postToken } from '../helpers/oauth-app.js'
import { buildOauthConfig, SECRETS } from '../helpers/oauth-config.js'

const config = await buildOauthConfig()
t.teardown(async () => {
  const { rm } = await import('node:fs/promises')
  await rm(config.server.data_dir, { recursive: true, force: true })
})

t.test('20 concurrent first requests of one client all get a valid token with its own jti', async (t) => {
  const { app, keys, close } = await buildOauthApp({ config })
  t.teardown(close)
  const form = { grant_type: 'client_credentials', client_id: 'content-reader', client_secret: SECRETS.content }
  const responses = await Promise.all(Array.from({ length: 20 }, () => postToken(app, form)))
  t.same(responses.map((res) => res.statusCode), Array(20).fill(200))
  const jtis = await Promise.all(responses.map(async (res) => {
    const { payload, protectedHeader } = await jwtVerify((res.json() as { access_token: string }).access_token, keys.resolve, { typ: 'at+jwt' })
    t.equal(protectedHeader.kid, keys.signing.kid)
    return payload.jti
  }))
  t.equal(new Set(jtis).size, 20, 'every token has its own jti')
})
