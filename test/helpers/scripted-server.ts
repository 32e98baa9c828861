import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Clock } from '../../src/client/clock.js'

/** One request the scripted server received. */
export interface ScriptedCall {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** What the script answers: a status, headers, a JSON body (or text); `'reset'` destroys the socket; `'stall'` never answers. */
export type ScriptedAnswer = { status: number, headers?: Record<string, string>, json?: unknown, text?: string } | 'reset' | 'stall'

export interface ScriptedServer {
  url: string
  /** API calls (everything but the token endpoint), in order. */
  calls: ScriptedCall[]
  /** Token endpoint calls. */
  tokenCalls: ScriptedCall[]
  /** Answers for API calls, taken in order; when empty, `fallback` answers. */
  script: ScriptedAnswer[]
  fallback: ScriptedAnswer | ((call: ScriptedCall) => ScriptedAnswer)
  /** The token endpoint's answers in order; when empty, a fresh token `tok-<n>` living `tokenLifetime` seconds. */
  tokenScript: ScriptedAnswer[]
  tokenLifetime: number
  close: () => Promise<void>
}

/**
 * A stand-in gateway for the client's retry tests: `/oauth/token` hands out `tok-1`, `tok-2`, …; every other
 * request is answered from `script`, then `fallback` (200 `{ok:true}`). Records every request with its body.
 */
export async function startScriptedServer (): Promise<ScriptedServer> {
  let issued = 0
  const state: ScriptedServer = {
    url: '',
    calls: [],
    tokenCalls: [],
    script: [],
    fallback: { status: 200, json: { ok: true } },
    tokenScript: [],
    tokenLifetime: 3600,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const call = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() }
      const isToken = call.url === '/oauth/token'
      ;(isToken ? state.tokenCalls : state.calls).push(call)
      const fallback = state.fallback
      let answer: ScriptedAnswer | undefined = isToken ? state.tokenScript.shift() : state.script.shift() ?? (typeof fallback === 'function' ? fallback(call) : fallback)
      answer ??= { status: 200, json: { access_token: `tok-${++issued}`, token_type: 'Bearer', expires_in: state.tokenLifetime } }
      if (answer === 'reset') {
        req.socket.destroy()
        return
      }
      if (answer === 'stall') return
      const body = answer.json === undefined ? answer.text ?? '' : JSON.stringify(answer.json)
      res.writeHead(answer.status, { ...(answer.json === undefined ? {} : { 'content-type': 'application/json' }), ...answer.headers })
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

/** A clock whose `sleep` records the wait and moves `now` forward at once (aborts are still honoured). */
export interface FakeClock extends Clock {
  waits: number[]
  advance: (ms: number) => void
}

export function fakeClock (start = Date.parse('2026-11-23T12:00:00Z')): FakeClock {
  let now = start
  const waits: number[] = []
  return {
    waits,
    now: () => now,
    advance: (ms) => { now += ms },
    sleep: async (ms, signal) => {
      if (signal?.aborted === true) throw signal.reason
      waits.push(ms)
      now += ms
    },
  }
}
