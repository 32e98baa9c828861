/**
 * The GC preload's memory (bench/gc-preload.ts): the last `capacity` pauses of a server process in fixed typed
 * arrays, so recording a pause allocates nothing and the server's heap does not grow with the run. Pure, so the
 * window selection can be tested on made-up pauses.
 */

/** One garbage-collection pause, on the run's monotonic clock (bench/mono-clock.ts). */
export interface GcPause {
  startMs: number
  durationMs: number
  /** V8's kind, as perf_hooks' constants number it: 1 minor (scavenge), 4 major (mark-compact), 8 incremental marking, 16 weak callbacks. */
  kind: number
}

/** The pauses of a time window, and whether the ring still held all of them. */
export interface GcWindowPauses {
  pauses: GcPause[]
  /** False when pauses were overwritten (the ring holds the last `capacity`) and the window reaches back to them. */
  complete: boolean
  /**
   * The capacity of V8's young generation when the preload answered: what can be allocated between two scavenges
   * (`new_space` used plus available). V8 grows it as objects survive scavenges, up to its cap (16 MB on 64-bit), and
   * shrinks it in a process that idles; a bigger one makes scavenges rarer but longer: whether a server's scavenges
   * fall in its p99 depends on it (docs/performance.md). Absent from the ring itself.
   */
  youngGenerationBytes?: number
}

/** A ring of the last `capacity` pauses. */
export class GcRing {
  private readonly starts: Float64Array
  private readonly durations: Float64Array
  private readonly kinds: Uint8Array
  /** Pauses pushed since the start (the next slot is pushed % capacity). */
  private pushed = 0
  /** When the latest of the overwritten pauses ended (pauses do not overlap: all overwritten ones ended by then). */
  private overwrittenUntil = Number.NEGATIVE_INFINITY

  constructor (readonly capacity = 16_384) {
    this.starts = new Float64Array(capacity)
    this.durations = new Float64Array(capacity)
    this.kinds = new Uint8Array(capacity)
  }

  push (startMs: number, durationMs: number, kind: number): void {
    const slot = this.pushed % this.capacity
    if (this.pushed >= this.capacity) this.overwrittenUntil = this.starts[slot] + this.durations[slot]
    this.starts[slot] = startMs
    this.durations[slot] = durationMs
    this.kinds[slot] = kind
    this.pushed++
  }

  /** The pauses that overlap [fromMs, toMs] (a pause that began before the window and ran into it counts), oldest first. */
  window (fromMs: number, toMs: number): GcWindowPauses {
    const held = Math.min(this.pushed, this.capacity)
    const first = this.pushed - held
    const pauses: GcPause[] = []
    for (let i = first; i < this.pushed; i++) {
      const slot = i % this.capacity
      const start = this.starts[slot]
      const duration = this.durations[slot]
      if (start < toMs && start + duration > fromMs) pauses.push({ startMs: start, durationMs: duration, kind: this.kinds[slot] })
    }
    return { pauses, complete: this.overwrittenUntil <= fromMs }
  }
}
