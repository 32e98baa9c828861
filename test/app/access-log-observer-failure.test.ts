import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import t from 'tap'
import { createLogger } from '../../src/logging/logger.js'
import { RequestLogController } from '../../src/observability/request-log-controller.js'
import { waitFor } from '../helpers/wait-for.js'

t.test('an access log or span export that throws on an answered request is logged once and ends nothing', async (t) => {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>); done() } })
  const controller = new RequestLogController({ disableRequestLogging: true })
  let observed = 0
  controller.observer = function failingObserver () {
    observed++
    throw new Error('sink broke')
  }
  const app = Fastify({ loggerInstance: createLogger('warn', sink), logController: controller })
  app.get('/ok', async () => ({ ok: true }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${base}/ok`)
    t.same([res.status, await res.text()], [200, '{"ok":true}'])
  }
  await waitFor(() => observed === 3, { what: 'the three answers observed' })
  t.same(lines.map((l) => ({ level: l.level, msg: l.msg, err: (l.err as { message?: string } | undefined)?.message })), [
    { level: 50, msg: 'the access log or span export failed on an answered request (its later failures are not logged)', err: 'sink broke' },
  ])
})
