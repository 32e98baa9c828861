import { createHook } from 'node:async_hooks'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { startWsBackend, type WsBackend } from '../helpers/ws-backend.js'
import { closeOf, nextMessage, openWs } from '../helpers/ws-client.js'
import { letTimePass } from '../helpers/wait-for.js'

/**
 * An idle relayed WebSocket costs no periodic work (issue 22): its rights are rechecked when a reload swaps the
 * snapshot (an event), not by polling, and its idle timeout and token expiry share one timer that fires only at the
 * earlier deadline. In process, because what is observed is the gateway's own timers: every timer created while the
 * connection opens and relays one message is tracked (async_hooks), and none of them may fire while it sits idle.
 */

const RW_HASH = '$scrypt$ln=15,r=8,p=1$VJNnriFV4HtjoqLcU/KggA$Oy75w3bu2mvI4sOD5uRaI5BRff89ZEbX9nciP5f4w3U'

const config = (backend: WsBackend, status: 'active' | 'revoked'): string => `
issuer: { issuer: http://localhost:8080 }
scopes:
  pricing:read: { description: Read prices }
organizations:
  - id: org_hq
    stores: [ { id: org_store_1 } ]
service_accounts:
  - { client_id: pricing-rw, organization: org_hq, status: ${status}, scopes: [pricing:read], secrets: [ { created: "2026-11-01", hash: "${RW_HASH}" } ] }
services:
  events:
    type: proxy
    prefix: /events
    envelope: exchange
    upstream: { targets: [ "${backend.url}" ] }
    websocket: { idle_timeout_seconds: 120 }
    policies: [ { auth: {} } ]
    routes:
      stream: { methods: [GET], path: "/*", websocket: true, policies: [ { scope: { all: [pricing:read] } } ] }
`

t.test('an idle WebSocket runs no timer callback; a reload rechecks it at once', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-ws-idle-'))
  const file = join(dir, 'gateway.yaml')
  const backend = await startWsBackend(t)
  await writeFile(file, config(backend, 'active'))
  const gateway = await buildTestApp({ file })
  t.teardown(async () => {
    await gateway.close()
    await rm(dir, { recursive: true, force: true })
  })
  await gateway.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (gateway.app.server.address() as AddressInfo).port
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'pricing-rw', client_secret: 'demo-exchange-secret' })
  const token = (await gateway.app.inject({ method: 'POST', url: '/oauth/token', payload: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })).json().access_token as string

  // Every timer created from here until the first echo came back (the gateway's, for this connection) is tracked.
  const tracked = new Set<number>()
  let recording = true
  const fired: number[] = []
  const hook = createHook({
    init (id, type) { if (recording && type === 'Timeout') tracked.add(id) },
    before (id) { if (tracked.has(id)) fired.push(id) },
  })
  hook.enable()
  t.teardown(() => { hook.disable() })
  const opened = await openWs(`ws://127.0.0.1:${port}/events/feed`, { headers: { authorization: `Bearer ${token}` } })
  if (!opened.open) throw new Error(`not upgraded: ${opened.status} ${opened.body}`)
  opened.ws.send('hello')
  t.same(await nextMessage(opened.ws), { data: Buffer.from('hello'), binary: false })
  recording = false
  t.ok(tracked.size > 0, 'the connection armed its timer while opening')

  // The observation itself is a span of time: the old 250 ms recheck poll fired about four times in it.
  await letTimePass(1200)
  t.same(fired, [], 'no timer of the connection fired while it sat idle')
  t.equal(gateway.app.websockets.rechecks, 0, 'nothing was rechecked without a reload')

  const closing = closeOf(opened.ws)
  await writeFile(file, config(backend, 'revoked'))
  t.equal((await gateway.gateway.reload()).outcome, 'applied')
  t.equal(gateway.app.websockets.rechecks, 1, 'the reload rechecked the open connection when it swapped the snapshot')
  const closed = await closing
  t.same([closed.code, closed.reason], [1008, 'unauthenticated'])
})
