/**
 * One clock for every process of a run: CLOCK_MONOTONIC (what `process.hrtime()` reads on Linux), counted from the
 * machine's boot, not from each process's start. The load generator stamps its samples with it and the servers' GC
 * preload stamps their pauses with it, so a sample and a pause can be set side by side without any wall-clock
 * conversion (which NTP may step, and each process's `performance.timeOrigin` rounds on its own).
 */

/** Milliseconds on the machine's monotonic clock (sub-microsecond resolution). */
export function monotonicMs (): number {
  const [seconds, nanoseconds] = process.hrtime()
  return seconds * 1e3 + nanoseconds / 1e6
}
