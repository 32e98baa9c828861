import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AccessLogConfig, AccessLogSinkConfig } from '../../config/types.js'
import { SYSLOG_FACILITIES, type AccessLogField } from '../../config/access-log-schema.js'
import { accessLine, accessRecord, orderedFields } from './access-line.js'
import { createFileSink } from './file-sink.js'
import { createHttpSink } from './http-sink.js'
import { DEFAULT_BUFFER_BYTES, type AccessLogSink, type SinkHooks } from './sink.js'
import { createStdoutSink } from './stdout-sink.js'
import { createSyslogSink } from './syslog-sink.js'

/** How long a sink a reload removed may take to write out its queued lines before they are dropped. */
const RETIRED_SINK_FLUSH_MS = 2_000

/** The access log as the current config sets it: the fields and the sinks (by the JSON of their config). */
interface Active {
  readonly fields: readonly AccessLogField[] | undefined
  readonly sinks: ReadonlyMap<string, AccessLogSink>
}

/**
 * The gateway's access log: off (nothing done per request but one field read) until a config with `access_log`
 * is applied, then one line per answered request to every sink. `configure` is called with each snapshot's
 * config (boot and reloads): a sink whose settings did not change is kept as it is (its file stays open, its
 * queue and counts carry on); a removed or changed one is closed after writing out what it holds. While a file
 * sink exists, SIGUSR1 reopens the files (after an outside logrotate moved them).
 */
export class AccessLog {
  #active: Active | undefined
  readonly #hooks: SinkHooks
  readonly #onSignal = (): void => { this.reopen() }
  #listening = false

  constructor (hooks: SinkHooks) {
    this.#hooks = hooks
  }

  /** Whether lines are written (a config with `access_log` is applied). */
  get on (): boolean {
    return this.#active !== undefined
  }

  /** Applies `config` (undefined: the access log is off); sinks no longer configured are closed in the background. */
  configure (config: AccessLogConfig | undefined): void {
    const before = this.#active?.sinks ?? new Map<string, AccessLogSink>()
    const sinks = new Map<string, AccessLogSink>()
    for (const sinkConfig of config?.sinks ?? []) {
      const key = JSON.stringify(sinkConfig)
      sinks.set(key, before.get(key) ?? this.#createSink(sinkConfig))
    }
    this.#active = config === undefined ? undefined : { fields: orderedFields(config.fields), sinks }
    for (const [key, sink] of before) {
      if (!sinks.has(key)) void sink.close(RETIRED_SINK_FLUSH_MS).catch((error: unknown) => { this.#hooks.onFailure(sink.name, error) })
    }
    this.#listenForReopen(config?.sinks.some((sink) => sink.type === 'file') === true)
  }

  /** Writes the line of one answered request to every sink (nothing when off). An arrow: handed on as a callback. */
  readonly record = (request: FastifyRequest, reply: FastifyReply): void => {
    const active = this.#active
    if (active === undefined) return
    const line = accessLine(accessRecord(request, reply, Date.now()), active.fields)
    for (const sink of active.sinks.values()) sink.write(line)
  }

  /** Reopens every file sink's file before its next line. */
  reopen (): void {
    for (const sink of this.#active?.sinks.values() ?? []) sink.reopen()
  }

  /** Turns the log off, writing out what the sinks hold for at most `timeoutMs` (the shutdown's bound). */
  async close (timeoutMs: number): Promise<void> {
    const sinks = [...this.#active?.sinks.values() ?? []]
    this.#active = undefined
    this.#listenForReopen(false)
    await Promise.all(sinks.map(async (sink) => sink.close(timeoutMs).catch((error: unknown) => { this.#hooks.onFailure(sink.name, error) })))
  }

  #createSink (config: AccessLogSinkConfig): AccessLogSink {
    const name = config.name ?? config.type
    const bufferBytes = config.buffer_bytes ?? DEFAULT_BUFFER_BYTES
    if (config.type === 'stdout') return createStdoutSink(name, bufferBytes, this.#hooks)
    if (config.type === 'http') {
      // Validation requires a url for an http sink (config/access-log-checks.ts).
      if (config.url === undefined) throw new Error(`access_log: http sink "${name}" has no url`)
      return createHttpSink({ name, url: config.url, headers: config.headers ?? {}, batchLines: config.batch_lines ?? 500, retries: config.retries ?? 3, bufferBytes }, this.#hooks)
    }
    if (config.type === 'syslog') {
      // Validation requires host and port for a syslog sink (config/access-log-checks.ts).
      if (config.host === undefined || config.port === undefined) throw new Error(`access_log: syslog sink "${name}" has no host or port`)
      return createSyslogSink({
        name,
        host: config.host,
        port: config.port,
        transport: config.transport ?? 'udp',
        facility: SYSLOG_FACILITIES.indexOf(config.facility ?? 'local0'),
        appName: config.app_name ?? 'lanegate',
        bufferBytes,
      }, this.#hooks)
    }
    // Validation requires a path for a file sink (config/access-log-checks.ts).
    if (config.path === undefined) throw new Error(`access_log: file sink "${name}" has no path`)
    return createFileSink({ name, path: config.path, maxBytes: config.max_bytes, daily: config.daily, keep: config.keep, bufferBytes }, this.#hooks)
  }

  /** SIGUSR1 is listened to only while a file sink exists (a listener replaces Node's default: starting the inspector). */
  #listenForReopen (wanted: boolean): void {
    if (wanted === this.#listening) return
    if (wanted) process.on('SIGUSR1', this.#onSignal)
    else process.off('SIGUSR1', this.#onSignal)
    this.#listening = wanted
  }
}
