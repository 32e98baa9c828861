import { inspect } from 'node:util'
import t from 'tap'
import { LanegateClient, LanegateError, codeOfAnswer, isLanegateError, lanegateErrorCodes } from '../../src/client/index.js'
import { catalogue } from '../../src/plugin/catalogue.js'
import { fakeClock, startScriptedServer } from '../helpers/scripted-server.js'

// How the client reads the gateway's error envelopes, and that the secret stays out of everything it throws.

t.test('the client\'s codes carry the catalogue\'s status and fixed texts', async (t) => {
  const differences = Object.entries(lanegateErrorCodes).flatMap(([code, entry]) => {
    const server = catalogue[code as keyof typeof catalogue]
    const wantText = server.shape === 'text' ? server.message : undefined
    const text = 'text' in entry ? entry.text : undefined
    return server.status === entry.status && text === wantText ? [] : [{ code, client: entry, server }]
  })
  t.same(differences, [])
})

t.test('each envelope maps to its code', async (t) => {
  const cases: Array<[number, unknown, string]> = [
    // exchange envelope: the code itself
    [409, { error: 'fanout_not_previewed', dispatch_id: 'd', status: 'committed', message: 'm' }, 'fanout_not_previewed'],
    [502, { error: 'upstream_error', upstream_status: 0, upstream_body: '', message: 'm' }, 'upstream_error'],
    [401, { error: 'invalid_token_type', message: 'm' }, 'invalid_token_type'],
    // plain envelope: the fixed texts
    [401, { error: 'Unauthenticated.' }, 'unauthenticated'],
    [403, { error: 'Forbidden.' }, 'forbidden'],
    [429, { error: 'Too many requests', retry_after: 3 }, 'too_many_requests'],
    [503, { error: 'The gateway is shutting down or a dependency is unavailable; retry shortly.' }, 'service_unavailable'],
    // oauth envelope: codes and their RFC 6749/6750 aliases
    [401, { error: 'invalid_client', error_description: 'd' }, 'invalid_client'],
    [400, { error: 'invalid_scope', error_description: 'd' }, 'invalid_scope'],
    [429, { error: 'rate_limit_exceeded', error_description: 'd', retry_after: 3 }, 'rate_limit_exceeded'],
    [401, { error: 'invalid_token', error_description: 'd' }, 'unauthenticated'],
    [403, { error: 'insufficient_scope', error_description: 'd' }, 'forbidden'],
    [503, { error: 'temporarily_unavailable', error_description: 'd' }, 'service_unavailable'],
    // payments envelope: no code in the body
    [422, { success: false, message: 'The request body is invalid.', errors: { amount: ['required'] } }, 'validation_failed'],
    [422, { success: false, message: 'This Idempotency-Key was already used with a different request body.' }, 'idempotency_key_reused'],
    [409, { success: false, message: 'A request with this Idempotency-Key is still being processed; retry later.' }, 'idempotency_key_in_use'],
    [400, { success: false, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters.' }, 'idempotency_key_invalid'],
    [403, { success: false, message: 'This organization is outside your organization\'s access.' }, 'forbidden'],
    // no body the client understands: the status decides
    [404, 'Not Found', 'not_found'],
    [500, undefined, 'internal_error'],
    [504, { something: 'else' }, 'internal_error'],
  ]
  t.same(cases.map(([status, body]) => codeOfAnswer(status, body)), cases.map(([, , code]) => code))
})

t.test('an endpoint\'s hint names the code a payments status means', async (t) => {
  t.equal(codeOfAnswer(404, { success: false, message: 'Payment intent not found.' }, { 404: 'payment_intent_not_found' }), 'payment_intent_not_found')
  t.equal(codeOfAnswer(409, { success: false, message: 'The payment intent cannot be canceled because its status is succeeded.', status: 'succeeded' }, { 409: 'payment_intent_not_cancelable' }), 'payment_intent_not_cancelable')
  t.equal(codeOfAnswer(409, { success: false, message: 'A request with this Idempotency-Key is still being processed; retry later.' }, { 409: 'payment_intent_not_cancelable' }), 'idempotency_key_in_use', 'the message wins over the hint')
})

t.test('isLanegateError narrows by code', async (t) => {
  const error: unknown = new LanegateError({ status: 409, code: 'fanout_not_previewed', body: {}, method: 'POST', path: '/v1/fanout/dispatches/d/commit', source: 'api' })
  t.equal(isLanegateError(error), true)
  t.equal(isLanegateError(error, 'fanout_not_previewed'), true)
  t.equal(isLanegateError(error, 'fanout_dispatch_not_found'), false)
  t.equal(isLanegateError(new Error('x')), false)
  if (isLanegateError(error, 'fanout_not_previewed')) {
    const code: 'fanout_not_previewed' = error.code // compiles only because the guard narrowed the code
    t.equal(code, 'fanout_not_previewed')
  }
})

const SECRET = 'super-secret-client-value-0001'

t.test('the secret appears in no thrown error: message, properties, JSON or inspect output', async (t) => {
  const server = await startScriptedServer()
  t.teardown(server.close)
  // A token endpoint that (wrongly) echoes the secret, then one that fails, then an API error.
  server.tokenScript.push(
    { status: 401, json: { error: 'invalid_client', error_description: `bad secret ${SECRET}` } },
    { status: 500, text: `boom ${SECRET}` },
  )
  const client = new LanegateClient({ baseUrl: server.url, clientId: 'demo-exchange', clientSecret: SECRET, clock: fakeClock(), retry: { maxAttempts: 1 } })
  const errors: unknown[] = []
  for (let i = 0; i < 2; i++) await client.content.list().catch((e: unknown) => errors.push(e))
  server.script.push({ status: 403, json: { error: 'Forbidden.' } })
  await client.content.list().catch((e: unknown) => errors.push(e))
  t.equal(errors.length, 3)
  t.same(errors.map((e) => (e as LanegateError).code), ['invalid_client', 'internal_error', 'forbidden'])
  t.equal(server.tokenCalls[0].body.includes(SECRET), true, 'the secret did go to the token endpoint')
  for (const error of errors) {
    const renderings = [String(error), (error as Error).message, (error as Error).stack ?? '', JSON.stringify(error), inspect(error, { depth: null, showHidden: true }), JSON.stringify(Object.entries(error as object))]
    t.notOk(renderings.some((text) => text.includes(SECRET)), `${(error as LanegateError).code}: no secret`)
  }
  t.same((errors[0] as LanegateError).body, { error: 'invalid_client', error_description: 'bad secret [redacted]' })
})

t.test('the client itself does not show the secret', async (t) => {
  const client = new LanegateClient({ baseUrl: 'http://127.0.0.1:1', clientId: 'demo-exchange', clientSecret: SECRET })
  t.notOk(inspect(client, { depth: null, showHidden: true }).includes(SECRET), 'inspect')
  t.notOk(JSON.stringify(client).includes(SECRET), 'JSON')
  t.notOk(inspect(client.tokens, { depth: null, showHidden: true }).includes(SECRET), 'inspect of the token source')
})
