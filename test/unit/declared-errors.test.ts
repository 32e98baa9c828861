import t from 'tap'
import { renderError } from '../../src/errors/envelopes.js'
import { declaredError, GatewayError } from '../../src/plugin/gateway-error.js'
import { policyContext } from '../../src/plugin/context.js'
import type { PolicyPlugin } from '../../src/plugin/policy.js'

const plugin: PolicyPlugin<unknown, 'header_missing'> = {
  name: 'needs-header',
  description: 'test',
  schema: { type: 'object' },
  errors: { header_missing: { status: 400, message: 'A required request header is missing.' } },
  create: () => () => undefined,
}
const context = policyContext(plugin as PolicyPlugin, {
  settings: {} as never, reachStore: () => false, tokens: {} as never, apiKeys: {} as never, limiter: () => ({}) as never, connectionSlots: {} as never, service: 's', routeId: 'r', envelope: 'exchange',
})

t.test('a code of the policy\'s own errors map renders in every envelope like a catalogued code-shaped error', async (t) => {
  const refusal = context.refuse('header_missing', { message: 'Send X-Channel.', fields: { header: 'X-Channel' }, headers: { 'x-hint': '1' } })
  t.equal(refusal.status, 400)
  t.same(refusal.headers, { 'x-hint': '1' })
  t.same(renderError(refusal, 'exchange'), { error: 'header_missing', header: 'X-Channel', message: 'Send X-Channel.' })
  t.same(renderError(refusal, 'plain'), { error: 'header_missing', header: 'X-Channel', message: 'Send X-Channel.' })
  t.same(renderError(refusal, 'payments'), { success: false, message: 'Send X-Channel.', header: 'X-Channel' })
  t.same(renderError(refusal, 'oauth'), { error: 'header_missing', error_description: 'Send X-Channel.', header: 'X-Channel' })
})

t.test('without a message, the declared default message is used', async (t) => {
  t.same(renderError(context.refuse('header_missing'), 'exchange'), { error: 'header_missing', message: 'A required request header is missing.' })
})

t.test('a catalogued code through refuse is the catalogue\'s error', async (t) => {
  const refusal = context.refuse('forbidden')
  t.ok(refusal instanceof GatewayError)
  t.same(renderError(refusal, 'exchange'), { error: 'Forbidden.' })
  t.equal(refusal.status, 403)
})

t.test('a declared 4xx carries no stack, a declared 5xx does (as catalogued errors)', async (t) => {
  t.equal(declaredError('x_client', { status: 409, message: 'm', shape: 'code' }).stack?.split('\n').length, 1)
  t.ok((declaredError('x_server', { status: 502, message: 'm', shape: 'code' }).stack?.split('\n').length ?? 0) > 1)
})
