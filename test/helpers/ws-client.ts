import WebSocket from 'ws'

/** How an upgrade attempt ended: open (101), or refused with a status and body (nothing upgraded). */
export type UpgradeResult =
  | { open: true, ws: WebSocket, protocol: string }
  | { open: false, status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** Opens a WebSocket with the `ws` package; a refusal resolves with the HTTP answer instead of throwing. */
export function openWs (url: string, options: { headers?: Record<string, string>, protocols?: string[], maxPayload?: number } = {}): Promise<UpgradeResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers, maxPayload: options.maxPayload ?? 64 * 1024 * 1024, perMessageDeflate: false })
    ws.once('open', () => { resolve({ open: true, ws, protocol: ws.protocol }) })
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        resolve({ open: false, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') })
        ws.terminate()
      })
    })
    ws.once('error', reject)
  })
}

/** The next message on `ws` (data and whether it was binary). */
export function nextMessage (ws: WebSocket): Promise<{ data: Buffer, binary: boolean }> {
  return new Promise((resolve) => {
    ws.once('message', (data, binary) => { resolve({ data: data as Buffer, binary }) })
  })
}

/** The close code and reason `ws` ends with, and when (Date.now()). */
export function closeOf (ws: WebSocket): Promise<{ code: number, reason: string, at: number }> {
  return new Promise((resolve) => {
    if (ws.readyState === ws.CLOSED) {
      resolve({ code: 1006, reason: '', at: Date.now() })
      return
    }
    ws.once('close', (code, reason) => { resolve({ code, reason: reason.toString(), at: Date.now() }) })
  })
}
