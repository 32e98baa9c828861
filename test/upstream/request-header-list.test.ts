import t from 'tap'
import type { IncomingHttpHeaders } from 'node:http'
import { HOST_VALUE_AT, upstreamRequestHeaderList, upstreamRequestHeaders, type UpstreamRequestHeaderInput } from '../../src/upstream/headers.js'

/** The object form as the flat list undici writes from it: each name in order, an array as one line per value. */
function asWritten (headers: Record<string, string | string[]>): string[] {
  const out: string[] = []
  for (const [name, value] of Object.entries(headers)) for (const each of [value].flat()) out.push(name, each)
  return out
}

/** The list with `host` moved to where the object has it, before the gateway's own (undici sends `host` first from either). */
function hostLast (list: string[]): string[] {
  const own = list.lastIndexOf('x-forwarded-for')
  return [...list.slice(2, own), 'host', list[HOST_VALUE_AT] as string, ...list.slice(own)]
}

const input: UpstreamRequestHeaderInput = {
  host: 'lane.example:8443',
  clientIp: '10.0.0.7',
  requestId: 'req-42',
  credential: 'Lane secret',
  trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=1' },
}

t.test('the relay\'s header list sends what the header object sends, line for line', async (t) => {
  const cases: IncomingHttpHeaders[] = [
    { host: 'gateway', connection: 'keep-alive', authorization: 'Bearer t', accept: 'application/json' },
    {
      host: 'gateway',
      connection: 'close, x-drop-me',
      'x-drop-me': '1',
      'keep-alive': 'timeout=5',
      'x-forwarded-for': '1.2.3.4',
      'x-forwarded-proto': 'https',
      cookie: 'a=b',
      'user-agent': 'curl/8',
      'content-type': 'application/json',
      'content-length': '12',
      'set-cookie': ['a=1', 'b=2'],
      traceparent: '00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01',
      'x-request-id': 'theirs',
      expect: '100-continue',
      te: 'trailers',
    },
    { ':method': 'GET', ':path': '/x', ':authority': 'gateway', ':scheme': 'https', accept: '*/*' },
  ]
  for (const headers of cases) {
    const list = upstreamRequestHeaderList(headers, input)
    t.same([list.slice(0, 2), hostLast(list)], [['host', input.host], asWritten(upstreamRequestHeaders(headers, input))])
  }
  t.same(upstreamRequestHeaderList({ 'user-agent': 'curl/8', 'set-cookie': ['a=1', 'b=2'] }, { host: 'h', clientIp: 'ip', requestId: 'id' }), [
    'host', 'h', 'user-agent', 'curl/8', 'set-cookie', 'a=1', 'set-cookie', 'b=2', 'x-forwarded-for', 'ip', 'x-request-id', 'id',
  ])
})
