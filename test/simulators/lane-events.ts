import type http from 'node:http'
import { WebSocketServer } from 'ws'

/**
 * The lane's push endpoints, for the README's WebSocket and SSE demos and the tests: `…/events?interval=MS&count=N`
 * answers a GET with a `text/event-stream` of N price events (default 10, one per second), and the same path upgraded
 * to a WebSocket pushes them as JSON text messages and echoes `{"echo": <message>}` for every message it receives.
 */
export function priceEvent (lane: string, seq: number): string {
  return JSON.stringify({ event: 'price', lane, seq, sku: `0001${seq % 10}`, price_cents: 199 + seq })
}

function pacing (url: URL): { interval: number, count: number } {
  return {
    interval: Math.max(1, Number(url.searchParams.get('interval') ?? 1000)),
    count: Math.max(1, Number(url.searchParams.get('count') ?? 10)),
  }
}

/** `GET …/events`: the events as server-sent events, then the stream ends. */
export function serveEventStream (lane: string, url: URL, res: http.ServerResponse): void {
  const { interval, count } = pacing(url)
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  let seq = 0
  const push = (): void => {
    seq++
    res.write(`id: ${seq}\nevent: price\ndata: ${priceEvent(lane, seq)}\n\n`)
    if (seq >= count) res.end()
    else timer = setTimeout(push, interval)
  }
  let timer = setTimeout(push, 0)
  res.on('close', () => { clearTimeout(timer) })
}

/** Upgrades on `…/events` become WebSockets that push the events; other upgrades are refused with 404. */
export function acceptEventSockets (lane: string, server: http.Server): void {
  const wss = new WebSocketServer({ noServer: true })
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://lane.invalid')
    if (!url.pathname.endsWith('/events')) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const { interval, count } = pacing(url)
      let seq = 0
      const timer = setInterval(() => {
        seq++
        ws.send(priceEvent(lane, seq))
        if (seq >= count) clearInterval(timer)
      }, interval)
      ws.on('message', (data) => { ws.send(JSON.stringify({ echo: String(data) })) })
      ws.on('close', () => { clearInterval(timer) })
    })
  })
}
