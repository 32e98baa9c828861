/**
 * One place access lines go. A sink holds at most its buffer of lines and never blocks the event loop: past the
 * buffer a line is dropped and told to `onDropped` (lanegate_access_log_dropped_total{sink}).
 */
export interface AccessLogSink {
  /** The `sink` label: the configured name, else the type. */
  readonly name: string
  /** Queues one newline-ended line; returns at once whatever the sink is doing. */
  write (line: string): void
  /** Closes and reopens the sink's file (an outside logrotate moved it: SIGUSR1); nothing for other sinks. */
  reopen (): void
  /** Writes out what is queued (at most `timeoutMs`), then releases the sink; lines still queued are dropped. */
  close (timeoutMs: number): Promise<void>
}

/** What every sink is given: where drops are counted and where its failures are told. */
export interface SinkHooks {
  /** `lines` lines were dropped (buffer full, or the destination failed). */
  onDropped (sink: string, lines: number): void
  /** The destination failed (a file that cannot be opened or written); told once until it works again. */
  onFailure (sink: string, error: unknown): void
}

/** Buffer of a sink whose config gives none: 8 MiB of lines (~30,000 lines of ~250 bytes). */
export const DEFAULT_BUFFER_BYTES = 8 * 1024 * 1024

/**
 * A sink's destination failures told once per failing period: the first failure goes to `onFailure`, the ones after
 * it are quiet until `recovered()` (the next write or connection that works) starts a new period.
 */
export class FailurePeriod {
  private failing = false

  constructor (private readonly hooks: SinkHooks, private readonly sink: string) {}

  failed (error: unknown): void {
    if (!this.failing) this.hooks.onFailure(this.sink, error)
    this.failing = true
  }

  recovered (): void {
    this.failing = false
  }
}
