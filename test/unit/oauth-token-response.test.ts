import t from 'tap'
import { tokenResponseBody, type TokenResponse } from '../../src/oauth/token-endpoint.js'

t.test('the token response body is what JSON.stringify writes for the same TokenResponse', async (t) => {
  const token = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLV8'
  for (const scope of ['engage:content.view engage:circulars.view', '', 'a"b\\c', 'ünïcode €', '\u2028\u0007']) {
    for (const [expiresIn, expiresAt] of [[3600, 1_790_003_600], [0, 0], [86_400, 9_999_999_999]] as const) {
      const response: TokenResponse = { access_token: token, token_type: 'Bearer', expires_in: expiresIn, expires_at: expiresAt, scope }
      t.equal(tokenResponseBody(token, expiresIn, expiresAt, JSON.stringify(scope)), JSON.stringify(response), `scope ${Buffer.from(scope).toString('hex')}, expires_in ${expiresIn}`)
    }
  }
})
