import { readFile } from 'node:fs/promises'
import t from 'tap'
import { catalogue, type CatalogueEntry, type ErrorCode } from '../../src/plugin/catalogue.js'
import { renderError } from '../../src/errors/envelopes.js'
import { envelopeNames } from '../../src/plugin/envelope-name.js'
import { GatewayError } from '../../src/plugin/gateway-error.js'
import { toGatewayError } from '../../src/errors/error-handler.js'
import { repoPath } from '../helpers/paths.js'

const codes = Object.keys(catalogue) as ErrorCode[]

t.test('docs/errors.md lists every catalogued code with its status, and nothing else', async (t) => {
  const doc = (await readFile(repoPath('docs/errors.md'), 'utf8')).split('## Codes')[1] ?? ''
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], (m[2] as string).trim()])
  t.same(rows.map((r) => r[0]).sort(), [...codes].sort())
  for (const [code, status] of rows) {
    t.ok(status?.includes(String(catalogue[code as ErrorCode].status)), `${code}: documented status ${status}`)
  }
})

t.test('every code renders in every envelope with the shape the spec gives', async (t) => {
  for (const code of codes) {
    const entry = catalogue[code]
    const error = new GatewayError(code, { message: 'specific message', fields: { extra: 1 } })
    t.same(renderError(error, 'oauth'), {
      error: 'oauth' in entry ? entry.oauth : code, error_description: 'specific message', extra: 1,
    }, `${code} oauth`)
    t.same(renderError(error, 'payments'), code === 'too_many_requests'
      ? { error: 'Too many requests', extra: 1 }
      : { success: false, message: 'specific message', extra: 1 }, `${code} payments`)
    t.same(renderError(error, 'plain'), entry.shape === 'text'
      ? { error: entry.message, extra: 1 }
      : { error: code, extra: 1, message: 'specific message' }, `${code} plain`)
    // exchange: {error: <code>, message} for every code but the spec's three authentication errors.
    const authentication = ['unauthenticated', 'forbidden', 'too_many_requests'].includes(code)
    t.same(renderError(error, 'exchange'), authentication
      ? { error: entry.message, extra: 1 }
      : { error: code, extra: 1, message: code === 'internal_error' ? entry.message : 'specific message' }, `${code} exchange`)
  }
  t.same(envelopeNames, ['oauth', 'payments', 'plain', 'exchange'])
})

t.test('the spec\'s fixed bodies', async (t) => {
  t.same(renderError(new GatewayError('unauthenticated'), 'payments'), { success: false, message: 'Unauthenticated.' })
  t.same(renderError(new GatewayError('unauthenticated'), 'plain'), { error: 'Unauthenticated.' })
  t.same(renderError(new GatewayError('forbidden', { message: 'This action requires the x scope.' }), 'plain'), { error: 'Forbidden.' })
  t.same(renderError(new GatewayError('too_many_requests', { fields: { retry_after: 12 } }), 'payments'), { error: 'Too many requests', retry_after: 12 })
  t.same(renderError(new GatewayError('rate_limit_exceeded', { fields: { retry_after: 5 } }), 'oauth'),
    { error: 'rate_limit_exceeded', error_description: catalogue.rate_limit_exceeded.message, retry_after: 5 })
  t.same(renderError(new GatewayError('store_not_found', { fields: { store_org_id: 'org_x' } }), 'exchange'),
    { error: 'store_not_found', store_org_id: 'org_x', message: catalogue.store_not_found.message })
})

t.test('upstream_error mirrors the lane status without changing the body', async (t) => {
  const mirrored = new GatewayError('upstream_error', { fields: { upstream_status: 409 } }).withStatus(409)
  t.equal(mirrored.status, 409)
  t.equal(mirrored.code, 'upstream_error')
  t.same(renderError(mirrored, 'exchange'), { error: 'upstream_error', upstream_status: 409, message: catalogue.upstream_error.message })
})

t.test('foreign errors are translated in one place; unknown ones become a bare 500', async (t) => {
  t.equal(toGatewayError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 })).code, 'payload_too_large')
  t.equal(toGatewayError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 })).code, 'unsupported_media_type')
  t.equal(toGatewayError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 })).code, 'bad_request')
  const unknown = toGatewayError(new Error('SELECT * FROM secrets failed at /srv/app.js:12'))
  t.equal(unknown.code, 'internal_error')
  t.same(renderError(unknown, 'exchange'), { error: 'internal_error', message: 'Internal server error.' })
  t.same(renderError(unknown, 'payments'), { success: false, message: 'Internal server error.' })
})

t.test('a 4xx error captures no stack frames (the 429 flood path), nor an upstream\'s failure; a 5xx keeps them for the error log', async (t) => {
  const limit = Error.stackTraceLimit
  for (const code of codes) {
    const stack = new GatewayError(code).stack ?? ''
    const frames = stack.split('\n').filter((line) => line.trimStart().startsWith('at ')).length
    const entry: CatalogueEntry = catalogue[code]
    if (entry.status < 500 || entry.upstream === true) t.equal(frames, 0, `${code}: no frames`)
    else t.ok(frames > 0, `${code}: has frames`)
    t.equal(Error.stackTraceLimit, limit, `${code}: the global stack limit is restored`)
  }
  t.match(new GatewayError('too_many_requests').stack, /^GatewayError: Too many requests/)
})
