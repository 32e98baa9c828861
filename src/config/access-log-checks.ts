import { formatPath, type ConfigProblem } from './config-error.js'
import type { GatewayConfig } from './types.js'

/** Keys only a `type: file` sink takes. */
const FILE_ONLY = ['path', 'max_bytes', 'daily', 'keep'] as const

/**
 * `access_log.sinks`: each sink's keys fit its type, and the names that label lanegate_access_log_dropped_total are
 * unique. A file is rotated by the one process that writes it, so with server.workers > 1 (several processes,
 * each rotating on its own) a file sink is refused rather than rotated by racing workers.
 */
export function checkAccessLog (config: GatewayConfig): { problem: ConfigProblem, segments: (string | number)[] }[] {
  const problems: { problem: ConfigProblem, segments: (string | number)[] }[] = []
  const report = (segments: (string | number)[], message: string): void => {
    problems.push({ problem: { path: formatPath(segments), message }, segments })
  }
  const names = new Set<string>()
  config.access_log?.sinks.forEach((sink, i) => {
    const name = sink.name ?? sink.type
    if (names.has(name)) report(['access_log', 'sinks', i, 'name'], `duplicate sink name "${name}" (give each sink of the same type a name)`)
    names.add(name)
    if (sink.type === 'file') {
      if (sink.path === undefined) report(['access_log', 'sinks', i, 'path'], 'required when type is file')
      if (config.server.workers !== 1) report(['access_log', 'sinks', i, 'type'], 'a file sink needs server.workers: 1 (each worker would rotate the same file); use stdout with several workers')
      return
    }
    for (const key of FILE_ONLY) {
      if (sink[key] !== undefined) report(['access_log', 'sinks', i, key], `only a file sink takes ${key}`)
    }
  })
  return problems
}
