import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createHttpSink } from '../../../src/logging/access-log/http-sink.js'
import type { SinkHooks } from '../../../src/logging/access-log/sink.js'
import { freePort } from '../../helpers/spawn-gateway.js'
import { waitFor } from '../../helpers/wait-for.js'

function recordingHooks (): SinkHooks & { dropped: number, failures: unknown[] } {
  const hooks = {
    dropped: 0,
    failures: [] as unknown[],
    onDropped (_sink: string, lines: number) { hooks.dropped += lines },
    onFailure (_sink: string, error: unknown) { hooks.failures.push(error) },
  }
  return hooks
}

/** A log endpoint: answers each request with the next of `statuses` (then 200), keeps the bodies it took. */
async function endpoint (t: Test, statuses: number[] = []): Promise<{ url: string, batches: unknown[][], requests: IncomingMessage[] }> {
  const batches: unknown[][] = []
  const requests: IncomingMessage[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => {
      requests.push(req)
      const status = statuses.shift() ?? 200
      if (status === 200) batches.push(JSON.parse(body) as unknown[])
      res.writeHead(status).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/logs`, batches, requests }
}

t.test('lines are POSTed as JSON arrays of at most batch_lines, with the configured headers', async (t) => {
  const logs = await endpoint(t)
  const hooks = recordingHooks()
  const sink = createHttpSink({ name: 'http', url: logs.url, headers: { 'x-api-key': 'k1' }, batchLines: 10, retries: 3 }, hooks)
  for (let n = 0; n < 25; n++) sink.write(`{"n":${n}}\n`)
  await waitFor(() => logs.batches.flat().length === 25, { what: 'all 25 lines at the endpoint' })
  await sink.close(1000)
  t.same(logs.batches.flat(), Array.from({ length: 25 }, (_, n) => ({ n })), 'every line once, in order')
  t.ok(logs.batches.every((b) => b.length <= 10), 'no batch over batch_lines')
  t.equal(logs.requests[0]?.headers['x-api-key'], 'k1')
  t.equal(logs.requests[0]?.headers['content-type'], 'application/json')
  t.equal(hooks.dropped, 0)
})

t.test('a 503 is tried again and the batch arrives; a batch still failing after the retries is dropped and counted', async (t) => {
  const logs = await endpoint(t, [503, 503, 500, 500, 500])
  const hooks = recordingHooks()
  const sink = createHttpSink({ name: 'http', url: logs.url, headers: {}, batchLines: 100, retries: 2 }, hooks)
  sink.write('{"n":1}\n')
  // 503, 503, then 500 on the last of three tries: dropped.
  await waitFor(() => hooks.dropped === 1, { what: 'the first batch dropped after 3 tries' })
  sink.write('{"n":2}\n')
  // 500, 500, then 200.
  await waitFor(() => logs.batches.length === 1, { what: 'the second batch delivered on its third try' })
  await sink.close(1000)
  t.same(logs.batches, [[{ n: 2 }]])
  t.equal(logs.requests.length, 6)
  t.equal(hooks.failures.length, 1, 'the failure told once')
})

t.test('a dead endpoint: the queue holds at most buffer_bytes, the rest is dropped at once and counted', async (t) => {
  const hooks = recordingHooks()
  const sink = createHttpSink({ name: 'http', url: `http://127.0.0.1:${await freePort()}/logs`, headers: {}, batchLines: 10, retries: 0, bufferBytes: 1024 }, hooks)
  for (let n = 0; n < 500; n++) sink.write(`{"n":${n},"pad":"${'x'.repeat(40)}"}\n`)
  t.ok(hooks.dropped > 450, `${hooks.dropped} dropped at once`)
  await waitFor(() => hooks.dropped === 500, { what: 'every line counted once its batch failed' })
  await sink.close(1000)
  t.match(String(hooks.failures[0]), /fetch failed|ECONNREFUSED/)
})
