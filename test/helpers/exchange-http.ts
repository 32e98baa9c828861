import http from 'node:http'
import net from 'node:net'

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
  /** The connection broke before the response ended (a cut response). */
  aborted: boolean
}

export interface RawRequest {
  method?: string
  /** Sent exactly as given (no normalization of `..` or encodings, unlike fetch). */
  path: string
  headers?: Record<string, string | string[]>
  body?: string | Buffer
}

/** One HTTP/1.1 request on a fresh connection, with the path sent verbatim. */
export function send (baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method ?? 'GET',
      path: request.path,
      headers: withLength(request),
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = []
      let settled = false
      const done = (aborted: boolean): void => {
        if (settled) return
        settled = true
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), aborted })
      }
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => done(!res.complete))
      res.on('error', () => done(true))
      res.on('close', () => done(!res.complete))
    })
    req.on('error', reject)
    req.end(request.body)
  })
}

function withLength (request: RawRequest): Record<string, string | string[]> | undefined {
  const headers = request.headers
  if (request.body === undefined) return headers
  const names = Object.keys(headers ?? {}).map((n) => n.toLowerCase())
  if (names.includes('content-length') || names.includes('transfer-encoding') || names.includes('trailer')) return headers
  return { ...headers, 'content-length': String(Buffer.byteLength(request.body)) }
}

/** Writes raw bytes on a new socket and returns everything the server sent until it closed the connection. */
export function sendRawBytes (baseUrl: string, bytes: string): Promise<string> {
  const url = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(bytes))
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.setTimeout(5000, () => socket.destroy())
  })
}
