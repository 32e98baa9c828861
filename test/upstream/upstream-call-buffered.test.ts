import { once } from 'node:events'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { callUpstream } from '../../src/upstream/call.js'
import { startBackend, testSettings, testUpstream } from '../helpers/upstream-servers.js'

/** callUpstream's answer read by its dispatch handler (buffered-attempt.ts), on real backends. */

const failureOf = (error: { status: number, fields: Record<string, unknown> }) => [error.status, error.fields.upstream_failure]

t.test('a body sent in several chunks is collected whole, and one crossing the bound mid-way is refused there', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('a'.repeat(40))
    setImmediate(() => res.end('b'.repeat(40)))
  })
  const upstream = testUpstream(t, testSettings([a.url]))
  const whole = await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 80, maxErrorBodyBytes: 64 })
  t.same([whole.status, whole.body], [200, 'a'.repeat(40) + 'b'.repeat(40)])
  const cut = await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 79, maxErrorBodyBytes: 64, overLimit: 'too_large' }).then(() => 'answered', failureOf)
  t.same(cut, [502, 'too_large'])
})

t.test('the whole call is bounded by timeoutMs: a head that came, then a body that stalls, is a timeout', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' })
    res.write('12345')
  })
  const upstream = testUpstream(t, testSettings([a.url]))
  t.same(await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 200, maxBodyBytes: 64, maxErrorBodyBytes: 64 }).then(() => 'answered', failureOf), [502, 'timeout'])
})

t.test('the caller\'s signal drops the call: aborted while waiting for the head, and already aborted', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle(() => {})
  const upstream = testUpstream(t, testSettings([a.url]))
  const controller = new AbortController()
  const pending = callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 64, maxErrorBodyBytes: 64, signal: controller.signal })
  await once(a.server, 'request')
  controller.abort()
  t.same(await pending.then(() => 'answered', failureOf), [502, 'unreachable'])
  t.same(await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 64, maxErrorBodyBytes: 64, signal: AbortSignal.abort() }).then(() => 'answered', failureOf), [502, 'unreachable'])
})

t.test('a 4xx/5xx body is decoded and bounded for upstream_body, whatever bound the 2xx has', async (t) => {
  const a = await startBackend(t, 'a')
  a.handle((_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
    res.end(gzipSync('busy '.repeat(100)))
  })
  const upstream = testUpstream(t, testSettings([a.url]))
  const answer = await callUpstream(upstream, { method: 'GET', path: '/x', timeoutMs: 5000, maxBodyBytes: 1, maxErrorBodyBytes: 20 })
  t.same([answer.status, answer.body, answer.bodyBytes.toString()], [503, 'busy busy busy busy  [truncated]', 'busy busy busy busy  [truncated]'])
})
