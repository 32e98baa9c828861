import t from 'tap'
import { ADMIN_TOKEN, ADMIN_TOKEN_ENV, idpConsole } from '../helpers/idp-console.js'

/**
 * A token pasted in the console reaches no log line of a real `lanegate start` logging at trace level: not when it is
 * valid, refused, sent in a malformed body or in one too large. The process's whole output is read after it exits,
 * so nothing still buffered is missed.
 */
t.test('a token pasted in the console is in no log line of the process', async (t) => {
  const idp = await idpConsole(t)
  const started = await idp.fixture.set('server.log_level', 'trace').start(t, { env: { [ADMIN_TOKEN_ENV]: ADMIN_TOKEN } })
  const { gateway } = started
  const post = (body: string) => fetch(`${gateway.admin ?? ''}/api/console/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body,
  })
  const valid = await idp.token(['pricing:read'])
  const expired = await idp.token(['pricing:write'], { iat: Math.floor(Date.now() / 1000) - 900 })
  const tooLarge = `${await idp.token(['x'.repeat(12_000)])}`

  const answers = [
    await post(JSON.stringify({ token: valid })),
    await post(JSON.stringify({ token: expired })),
    await post(`{"token": "${valid}"`),
    await post(JSON.stringify({ token: tooLarge })),
  ]
  t.same(answers.map((a) => a.status), [200, 200, 400, 413])
  t.match(await answers[0]?.json(), { verified: true, principal: { subject: 'jane' } })
  t.match(await answers[1]?.json(), { verified: false, refusal: { code: 'unauthenticated' } })

  gateway.child.kill('SIGTERM')
  t.equal(await gateway.exited, 0)
  const logs = gateway.output() + gateway.errors()
  t.ok(logs.includes('Admin listening on'), 'the process\'s log was read')
  for (const [name, token] of [['valid', valid], ['expired', expired], ['too large', tooLarge]] as const) {
    const [header, payload, signature] = token.split('.')
    for (const part of [token, `${header}.${payload}`, signature]) t.notOk(logs.includes(part ?? ''), `no part of the ${name} token is logged`)
  }
})
