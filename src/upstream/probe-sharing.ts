/**
 * Who runs the active health probes, and how their results reach the processes that did not probe. One process
 * (no `server.workers`): it probes, and there is nobody to tell. With `server.workers` > 1 the primary names one
 * worker the prober (cluster/worker-probes.ts installs the sharing before the worker boots): it probes every
 * upstream and publishes each result, which the primary passes to every other worker — so a backend sees one
 * probe per interval per host, not one per worker, and every worker ejects (and takes back) the same targets.
 */

/** One probe's result, as another process applies it: the target by its URL, the check by its path. */
export interface ProbeResult {
  readonly url: string
  readonly path: string
  readonly healthy: boolean
}

export interface ProbeSharing {
  /** Whether this process runs the probes now. */
  readonly probing: boolean
  /** Told every result this process's own probes got. */
  publish (result: ProbeResult): void
}

/** What a running check (active-health.ts) lets the sharing do. */
export interface SharedCheck {
  /** Applies a result another process probed, when this check watches that target on that path. */
  applyShared (result: ProbeResult): void
  /** Runs a round now (this process just became the prober). */
  round (): Promise<void>
}

let sharing: ProbeSharing = { probing: true, publish () {} }
const checks = new Set<SharedCheck>()

/** Installs how this process shares its probes (a worker of `server.workers`); before the gateway boots. */
export function useProbeSharing (next: ProbeSharing): void {
  sharing = next
}

export function probeSharing (): ProbeSharing {
  return sharing
}

/** A check starts (its upstream was built) or stops (retired by a reload). */
export function registerCheck (check: SharedCheck): void { checks.add(check) }
export function unregisterCheck (check: SharedCheck): void { checks.delete(check) }

/** A result another process probed, applied to every running check of that target and path. */
export function applyProbeResult (result: ProbeResult): void {
  for (const check of checks) check.applyShared(result)
}

/** This process became the prober: every check runs a round at once, as a check does when it starts. */
export function probeNow (): void {
  for (const check of checks) void check.round()
}
