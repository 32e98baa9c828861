import { DEFAULT_BUFFER_BYTES, FailurePeriod, type AccessLogSink, type SinkHooks } from './sink.js'

export interface HttpSinkOptions {
  name: string
  url: string
  headers: Record<string, string>
  /** Most lines per request. */
  batchLines: number
  /** Tries after the first when an answer is 429/5xx or none came. */
  retries: number
  bufferBytes?: number
}

/** How often queued lines are sent when fewer than a batch wait. */
const FLUSH_MS = 1_000
/** One request (a try) may take this long. */
const REQUEST_TIMEOUT_MS = 10_000
/** The wait before the first retry; doubled for each next one. */
const RETRY_BASE_MS = 250

/**
 * Access lines POSTed as JSON arrays (`[{line}, {line}, …]`, `Content-Type: application/json`) to a log endpoint:
 * at most `batchLines` per request, at least every second, one request at a time. A 429, a 5xx or no answer is tried
 * again (`retries` times, backing off from 250 ms); a batch that still fails, or that the endpoint refuses with
 * another 4xx, is dropped and counted. Lines wait in a queue of at most `bufferBytes`; past it they are dropped and
 * counted, so a slow or dead endpoint never holds up a request.
 */
export function createHttpSink (options: HttpSinkOptions, hooks: SinkHooks): AccessLogSink {
  const bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES
  let queue: string[] = []
  let queuedBytes = 0
  let sending: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined
  let closed = false
  const failures = new FailurePeriod(hooks, options.name)

  async function post (body: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      let status = 0
      let failure: unknown
      try {
        const res = await fetch(options.url, { method: 'POST', headers: { ...options.headers, 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
        status = res.status
        await res.arrayBuffer()
      } catch (error) {
        failure = error
      }
      if (status >= 200 && status < 300) return true
      const retriable = status === 0 || status === 429 || status >= 500
      if (!retriable || attempt >= options.retries || closed) {
        failures.failed(failure ?? new Error(`${options.url} answered ${status}`))
        return false
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_BASE_MS * 2 ** attempt).unref())
    }
  }

  async function sendQueued (): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, options.batchLines)
      const bytes = batch.reduce((sum, line) => sum + line.length, 0)
      const body = `[${batch.map((line) => line.trimEnd()).join(',')}]`
      const sent = await post(body)
      queuedBytes -= bytes
      if (sent) failures.recovered()
      else hooks.onDropped(options.name, batch.length)
    }
  }

  function kick (): void {
    clearTimeout(timer)
    timer = undefined
    sending ??= sendQueued().finally(() => { sending = undefined })
  }

  return {
    name: options.name,
    write (line) {
      if (closed || queuedBytes + line.length > bufferBytes) {
        hooks.onDropped(options.name, 1)
        return
      }
      queue.push(line)
      queuedBytes += line.length
      if (sending !== undefined) return
      if (queue.length >= options.batchLines) kick()
      else timer ??= setTimeout(kick, FLUSH_MS).unref()
    },
    reopen () {},
    async close (timeoutMs) {
      clearTimeout(timer)
      if (!closed && queue.length > 0) kick()
      closed = true
      if (sending !== undefined) await Promise.race([sending, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())])
      hooks.onDropped(options.name, queue.length)
      queue = []
      queuedBytes = 0
    },
  }
}
