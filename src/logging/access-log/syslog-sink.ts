import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { hostname } from 'node:os'
import { connect, type Socket } from 'node:net'
import { FailurePeriod, type AccessLogSink, type SinkHooks } from './sink.js'

export interface SyslogSinkOptions {
  name: string
  host: string
  port: number
  transport: 'udp' | 'tcp'
  /** Syslog facility number (local0 = 16). */
  facility: number
  appName: string
  bufferBytes: number
}

/** Severity of every access line: informational. */
const SEVERITY_INFO = 6
/** How long a broken TCP connection waits before the next line tries a new one. */
const RECONNECT_MS = 1_000

/**
 * Access lines as RFC 5424 syslog messages: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID access - {json}`, over UDP
 * (one datagram per line) or TCP (RFC 6587 octet counting: `LEN SP MSG`). Bounded like every sink: the bytes handed
 * to the socket and not yet written are counted, and past `bufferBytes` a line is dropped; a line a broken connection
 * never wrote is counted as dropped through its write callback (over UDP, the lines queued behind a bind that failed
 * when it fails). A TCP connection that fails is retried once RECONNECT_MS passed, on the next line.
 */
export function createSyslogSink (options: SyslogSinkOptions, hooks: SinkHooks): AccessLogSink {
  const header = ` ${hostname() || '-'} ${options.appName} ${process.pid} access - `
  const pri = `<${options.facility * 8 + SEVERITY_INFO}>1 `
  const message = (line: string): string => `${pri}${new Date().toISOString()}${header}${line.endsWith('\n') ? line.slice(0, -1) : line}`
  const transport = options.transport === 'udp' ? udpTransport(options, hooks) : tcpTransport(options, hooks)
  let closed = false
  return {
    name: options.name,
    write (line) {
      if (closed) {
        hooks.onDropped(options.name, 1)
        return
      }
      transport.send(message(line))
    },
    reopen () {},
    async close (timeoutMs) {
      closed = true
      await transport.close(timeoutMs)
    },
  }
}

interface Transport {
  send (message: string): void
  close (timeoutMs: number): Promise<void>
}

function udpTransport (options: SyslogSinkOptions, hooks: SinkHooks): Transport {
  const socket: UdpSocket = createSocket(options.host.includes(':') ? 'udp6' : 'udp4')
  socket.unref()
  let pending = 0
  // Sends not yet called back. Until the socket is bound, Node queues them behind its bind; a bind that fails emits
  // one 'error' and discards that queue without calling back, so the error counts them dropped and starts a new
  // attempt (the next send binds again), and a late callback of an earlier attempt is ignored.
  let queued = 0
  let attempt = 0
  let bound = false
  // Told once per failing period, whether the error came to a send's callback or as the socket's own event.
  const failures = new FailurePeriod(hooks, options.name)
  socket.once('listening', () => { bound = true })
  socket.on('error', (error) => {
    if (!bound) {
      if (queued > 0) hooks.onDropped(options.name, queued)
      queued = 0
      pending = 0
      attempt++
    }
    failures.failed(error)
  })
  return {
    send (message) {
      const bytes = Buffer.from(message)
      if (pending + bytes.length > options.bufferBytes) {
        hooks.onDropped(options.name, 1)
        return
      }
      pending += bytes.length
      queued++
      const sentIn = attempt
      socket.send(bytes, options.port, options.host, (error) => {
        if (sentIn !== attempt) return
        pending -= bytes.length
        queued--
        if (error === null) {
          failures.recovered()
          return
        }
        hooks.onDropped(options.name, 1)
        failures.failed(error)
      })
    },
    async close (timeoutMs) {
      await waitUntil(() => pending === 0, timeoutMs)
      socket.close()
    },
  }
}

function tcpTransport (options: SyslogSinkOptions, hooks: SinkHooks): Transport {
  let socket: Socket | undefined
  let brokenAt = 0
  const failures = new FailurePeriod(hooks, options.name)

  function open (): Socket | undefined {
    if (socket !== undefined) return socket
    if (Date.now() - brokenAt < RECONNECT_MS) return undefined
    const opened = connect({ host: options.host, port: options.port })
    opened.unref()
    opened.setNoDelay(true)
    opened.on('connect', () => { failures.recovered() })
    opened.on('error', (error) => { failures.failed(error) })
    opened.on('close', () => {
      if (socket === opened) socket = undefined
      brokenAt = Date.now()
    })
    socket = opened
    return opened
  }

  return {
    send (message) {
      const target = open()
      const length = Buffer.byteLength(message)
      if (target === undefined || target.writableLength + length > options.bufferBytes) {
        hooks.onDropped(options.name, 1)
        return
      }
      target.write(`${length} ${message}`, (error) => { if (error !== undefined && error !== null) hooks.onDropped(options.name, 1) })
    },
    async close (timeoutMs) {
      const open = socket
      if (open === undefined) return
      await waitUntil(() => open.writableLength === 0 || open.destroyed, timeoutMs)
      open.destroy()
    },
  }
}

/** Resolves once `done()` holds or `timeoutMs` passed, checking every 10 ms. */
async function waitUntil (done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
}
