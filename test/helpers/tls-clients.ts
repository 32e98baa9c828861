import { execFile, spawn } from 'node:child_process'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import type { IncomingHttpHeaders } from 'node:http'
import type { TLSSocket } from 'node:tls'

/** What a client saw: status, headers, body, and the certificate the server presented. */
export interface TlsAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: string
  /** Serial of the server's certificate (upper-case hex); '' on a reused socket without a peer certificate. */
  serial: string
  protocol: string | null
}

/** One request with node:https (an `agent` keeps connections alive; `agent: false` makes a new handshake). */
export function httpsGet (url: string, options: RequestOptions & { body?: string }): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, options, (res) => {
      const socket = res.socket as TLSSocket
      const serial = socket.getPeerCertificate?.()?.serialNumber ?? ''
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), serial: serial.toUpperCase(), protocol: socket.getProtocol?.() ?? null }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

export interface CurlAnswer { code: number, status: number, headers: string, body: string, stderr: string }

/** `curl -s -D - args…`: the exit code, the status of the last response, its head and body. */
export function curl (args: string[]): Promise<CurlAnswer> {
  return new Promise((resolve) => {
    execFile('curl', ['-s', '-S', '-D', '-', '--max-time', '20', ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1
      const split = stdout.lastIndexOf('\r\n\r\n')
      const headers = split === -1 ? stdout : stdout.slice(0, split)
      const body = split === -1 ? '' : stdout.slice(split + 4)
      const blocks = headers.split('\r\n\r\n')
      const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(blocks[blocks.length - 1] ?? '')?.[1] ?? 0)
      resolve({ code, status, headers: blocks[blocks.length - 1] ?? '', body, stderr })
    })
  })
}

export interface SClientAnswer { code: number | null, output: string }

/** `openssl s_client` against 127.0.0.1:port with `args`; stdin closed at once (handshake, then quit). */
export function sClient (port: number, args: string[]): Promise<SClientAnswer> {
  return new Promise((resolve) => {
    const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.stdin.end()
    const timer = setTimeout(() => child.kill(), 20_000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

export interface H2Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string, alpn: string | false | undefined }

/** One request over HTTP/2 (node:http2) on a session of its own. */
export function h2Request (base: string, ca: Buffer, path: string, options: { method?: string, headers?: Record<string, string>, body?: string, cert?: Buffer, key?: Buffer } = {}): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    import('node:http2').then(({ connect }) => {
      const session = connect(base, { ca, cert: options.cert, key: options.key })
      session.on('error', reject)
      const stream = session.request({ ':method': options.method ?? 'GET', ':path': path, ...options.headers })
      let head: Record<string, string | string[] | undefined> = {}
      const chunks: Buffer[] = []
      stream.on('response', (headers) => { head = headers as typeof head })
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('error', reject)
      stream.on('end', () => {
        const alpn = session.alpnProtocol
        session.close()
        const status = Number(head[':status'])
        const headers = { ...head }
        delete headers[':status']
        resolve({ status, headers, body: Buffer.concat(chunks).toString('utf8'), alpn })
      })
      stream.end(options.body)
    }, reject)
  })
}
