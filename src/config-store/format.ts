import { createTwoFilesPatch } from 'diff'
import type { ConfigVersion, VersionSummary } from './config-store.js'
import type { FleetStatus } from './fleet-status.js'

/** A time as the CLI prints it: ISO 8601 to the second, UTC. */
export function isoSecond (ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** `lanegate config history`: one line per version, with the instances that run it. */
export function historyLines (versions: readonly VersionSummary[], fleet: FleetStatus): string[] {
  const running = new Map<number, string[]>()
  for (const instance of fleet.instances) {
    if (instance.appliedVersion !== null) running.set(instance.appliedVersion, [...running.get(instance.appliedVersion) ?? [], instance.instanceId])
  }
  return versions.map((v) => {
    const rollback = v.rollbackOf === null ? '' : ` (rollback to ${v.rollbackOf})`
    const on = running.get(v.version)
    return `${v.version}\t${v.sha256.slice(0, 12)}\t${isoSecond(v.createdAt)}\t${v.author}\t${v.message}${rollback}${on === undefined ? '' : `\t[running on ${on.join(', ')}]`}`
  })
}

/** `lanegate config show`: the version's record, a blank line, then its text. */
export function showVersion (v: ConfigVersion): string {
  const lines = [
    `version: ${v.version}`,
    `parent: ${v.parent ?? '-'}`,
    `sha256: ${v.sha256}`,
    `author: ${v.author}`,
    `time: ${isoSecond(v.createdAt)}`,
    `message: ${v.message}`,
  ]
  if (v.rollbackOf !== null) lines.push(`rollback of: ${v.rollbackOf}`)
  return `${lines.join('\n')}\n\n${v.text}`
}

/** `lanegate config status`: the head, one line per live instance, and whether the fleet converged. */
export function statusLines (fleet: FleetStatus, now = Date.now()): string[] {
  const lines = [`head: version ${fleet.head}`]
  if (fleet.instances.length === 0) lines.push('no live instance (none sent a heartbeat in the last 15 s)')
  for (const i of fleet.instances) {
    const applied = i.appliedVersion === null ? 'workers differ' : `version ${i.appliedVersion} since ${isoSecond(i.appliedSince ?? 0)}`
    const refused = i.refused === null ? '' : `; REFUSED version ${i.refused.version}: ${i.refused.reason}`
    lines.push(`${i.instanceId}\thost ${i.host}\tpid ${i.pid}\t${i.workers} worker${i.workers === 1 ? '' : 's'}\t${applied}\theartbeat ${Math.round((now - i.lastHeartbeat) / 1000)} s ago\t${i.converged ? 'ok' : 'BEHIND'}${refused}`)
  }
  lines.push(fleet.converged ? `converged: every live instance runs version ${fleet.head}` : 'not converged')
  return lines
}

/** A unified diff from `before` to `after`, empty when the texts are equal. */
export function unifiedDiff (before: { name: string, text: string }, after: { name: string, text: string }): string {
  if (before.text === after.text) return ''
  // jsdiff heads the patch with a line of '=' (its "Index:" format): diff -u and git start at '---'.
  return createTwoFilesPatch(before.name, after.name, before.text, after.text, undefined, undefined, { context: 3 }).replace(/^=+\n/, '')
}
