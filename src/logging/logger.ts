import { pino, type DestinationStream, type Logger } from 'pino'
import type { AsyncLogDestination } from './log-destination.js'

/** Query parameters whose values never reach a log line (RFC 6750 §5.3, RELIABILITY G5). */
const SECRET_QUERY_PARAMS = /^(access_token|client_secret|token|secret|password|refresh_token|code|api_key|apikey|api-key|key)$/i

/** The request URL as logged: the path, and query values replaced where the name looks like a credential. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const params = new URLSearchParams(url.slice(q + 1))
  const kept: string[] = []
  for (const [name, value] of params) {
    kept.push(`${encodeURIComponent(name)}=${SECRET_QUERY_PARAMS.test(name) ? '[Redacted]' : encodeURIComponent(value)}`)
  }
  return `${url.slice(0, q)}?${kept.join('&')}`
}

interface LoggedRequest { id: string, method: string, url: string, ip?: string, socket?: { remotePort?: number } }

/**
 * The gateway's pino logger. Requests are logged as id, method, redacted URL and client IP only: never headers
 * (Authorization, Cookie) or bodies (client_secret). `redact` catches the same fields if something logs them
 * anyway.
 */
export function createLogger (level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization', 'req.headers.cookie', 'req.headers["proxy-authorization"]',
        'headers.authorization', 'headers.cookie', 'headers["proxy-authorization"]',
        'body.client_secret', 'client_secret', 'access_token', 'token', 'secret', 'authorization',
        'res.headers["set-cookie"]',
      ],
      censor: '[Redacted]',
    },
    serializers: {
      req: (req: LoggedRequest) => ({ id: req.id, method: req.method, url: redactUrl(req.url), ip: req.ip }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  }, destination)
}

/** The message of the warn line that follows dropped log lines (docs/operations.md, Logs). */
export const DROPPED_LINES_MESSAGE = 'log lines were dropped while the log destination was backed up (its reader lagged)'

/**
 * Makes dropped log lines visible in the log itself: once `destination` has drained after dropping lines, one
 * warn line `{dropped_lines: N}` (N = lines lost since the previous such line). It cannot be written while the
 * destination is backed up, so it comes when the reader caught up; `lanegate_log_lines_dropped_total` counts the
 * same lines as they are dropped.
 */
export function warnOfDroppedLines (logger: Logger, destination: AsyncLogDestination): void {
  destination.onDrained(function droppedLinesWarning (droppedLines) {
    logger.warn({ dropped_lines: droppedLines }, DROPPED_LINES_MESSAGE)
  })
}
