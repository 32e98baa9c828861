import type { InstanceRow } from './config-store.js'

/** One instance (a `lanegate start`: a single process, or a primary and its workers) as the fleet view shows it. */
export interface FleetInstance {
  instanceId: string
  host: string
  /** The pid of the process that was started (the primary under `server.workers`). */
  pid: number
  /** Serving processes reporting (1 for a single process). */
  workers: number
  /** The version every worker of it runs, or null while its workers differ (or none applied yet). */
  appliedVersion: number | null
  appliedSha256: string | null
  /** When the last of its workers applied `appliedVersion`. */
  appliedSince: number | null
  lastHeartbeat: number
  /** The newest refusal of a version still newer than what it runs (a file or plugin missing on that host). */
  refused: { version: number, reason: string, at: number } | null
  /** Every worker runs the head. */
  converged: boolean
}

export interface FleetStatus {
  head: number
  instances: FleetInstance[]
  /** Every live instance runs the head (false with no live instance: nothing serves it). */
  converged: boolean
}

/** The instances grouped from their workers' rows, against `head`; `rows` are the live ones (`ConfigStore.instances`). */
export function fleetStatus (head: number, rows: readonly InstanceRow[]): FleetStatus {
  const groups = new Map<string, InstanceRow[]>()
  for (const row of rows) {
    groups.set(row.instanceId, [...groups.get(row.instanceId) ?? [], row])
  }
  const instances = [...groups.entries()].map(([instanceId, workers]) => instanceOf(instanceId, workers, head))
  instances.sort((a, b) => a.instanceId.localeCompare(b.instanceId))
  return { head, instances, converged: instances.length > 0 && instances.every((i) => i.converged) }
}

function instanceOf (instanceId: string, workers: InstanceRow[], head: number): FleetInstance {
  const versions = new Set(workers.map((w) => w.applied?.version ?? null))
  const applied = versions.size === 1 ? [...versions][0] ?? null : null
  const refusals = workers.flatMap((w) => w.refused !== undefined && w.refused.version > (w.applied?.version ?? 0) ? [w.refused] : [])
  refusals.sort((a, b) => b.version - a.version)
  const first = workers[0] as InstanceRow
  return {
    instanceId,
    host: first.host,
    pid: Number(instanceId.slice(instanceId.lastIndexOf(':') + 1)) || first.pid,
    workers: workers.length,
    appliedVersion: applied,
    appliedSha256: applied === null ? null : first.applied?.sha256 ?? null,
    appliedSince: applied === null ? null : Math.max(...workers.map((w) => w.applied?.at ?? 0)),
    lastHeartbeat: Math.max(...workers.map((w) => w.heartbeatAt)),
    refused: refusals[0] ?? null,
    converged: applied === head,
  }
}
