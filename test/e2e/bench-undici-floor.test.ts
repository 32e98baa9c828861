import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { freePort, waitForPort } from '../../bench/processes.js'

// The bench's undici-floor peer (bench/servers/undici-floor.ts), compiled beside this test.
const FLOOR = fileURLToPath(new URL('../../bench/servers/undici-floor.js', import.meta.url))

async function startFloor (t: Test, target: string): Promise<string> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [FLOOR, '--port', String(port), '--target', target], { stdio: 'ignore' })
  t.teardown(() => { child.kill('SIGTERM') })
  await waitForPort(port, child)
  return `http://127.0.0.1:${port}`
}

t.test('the undici floor relays a GET to its target: status, body and the target\'s headers, with the host rewritten and the caller\'s token dropped', async (t) => {
  let seen: { url?: string, host?: string, custom?: string, authorization?: string } = {}
  const lane: Server = createServer((request, response) => {
    seen = { url: request.url, host: request.headers.host, custom: request.headers['x-custom'] as string, authorization: request.headers.authorization }
    response.writeHead(201, { 'content-type': 'application/json', 'x-lane': 'yes' })
    response.end('{"lane":"ok"}')
  })
  lane.listen(0, '127.0.0.1')
  await once(lane, 'listening')
  t.teardown(() => { lane.close() })
  const lanePort = (lane.address() as AddressInfo).port
  const floor = await startFloor(t, `http://127.0.0.1:${lanePort}`)

  const res = await fetch(`${floor}/api/items/000123?x=1`, { headers: { 'x-custom': 'kept', authorization: 'Bearer abc.def.ghi' } })
  t.equal(res.status, 201)
  t.equal(res.headers.get('content-type'), 'application/json')
  t.equal(res.headers.get('x-lane'), 'yes')
  t.equal(await res.text(), '{"lane":"ok"}')
  t.same(seen, { url: '/api/items/000123?x=1', host: `127.0.0.1:${lanePort}`, custom: 'kept', authorization: undefined })
})

t.test('the undici floor answers 502 when its target refuses connections', async (t) => {
  const closed = await freePort()
  const floor = await startFloor(t, `http://127.0.0.1:${closed}`)
  const res = await fetch(`${floor}/api/items/000123`)
  t.equal(res.status, 502)
  t.equal(await res.text(), '')
})
