/** `upstream.outlier_ejection`: targets whose failure rate stands far above their siblings' are left out a while. */
export interface OutlierEjectionSettings {
  /** How often the targets' failure rates over the last interval are compared. */
  readonly interval_seconds: number
  /** A target with fewer answers than this in the interval is neither judged nor counted among the siblings. */
  readonly min_requests: number
  /** Ejected when its failure rate is at least this many percentage points above its siblings' together. */
  readonly above_siblings_percent: number
  /** Answer statuses that count as failures (a no-answer failure always counts). */
  readonly failure_statuses: readonly number[]
  /** How long an ejected target is left out. */
  readonly eject_seconds: number
  /** Never more than this share of the targets ejected at once (rounded down; at least one may be). */
  readonly max_ejected_percent: number
}

/** One target's answers and failures since the last comparison. */
export class OutlierCounts {
  total = 0
  failed = 0
  constructor (private readonly failing: Uint8Array) {}

  /** An answer with `status`. */
  answer (status: number): void {
    this.total++
    if (this.failing[status] === 1) this.failed++
  }

  /** No answer (refused, reset, timeout…). */
  failure (): void {
    this.total++
    this.failed++
  }
}
