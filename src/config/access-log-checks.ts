import type { Report } from './config-error.js'
import type { GatewayConfig } from './types.js'

/** Keys only a `type: file` sink takes, only a `type: syslog` one, only a `type: http` one. */
const FILE_ONLY = ['path', 'max_bytes', 'daily', 'keep'] as const
const SYSLOG_ONLY = ['host', 'port', 'transport', 'facility', 'app_name'] as const
const HTTP_ONLY = ['url', 'headers', 'batch_lines', 'retries'] as const

/**
 * `access_log.sinks`: each sink's keys fit its type, and the names that label lanegate_access_log_dropped_total are
 * unique. A file is rotated by the one process that writes it, so with server.workers > 1 (several processes,
 * each rotating on its own) a file sink is refused rather than rotated by racing workers.
 */
export function checkAccessLog (config: GatewayConfig, report: Report): void {
  const names = new Set<string>()
  config.access_log?.sinks.forEach((sink, i) => {
    const name = sink.name ?? sink.type
    if (names.has(name)) report(['access_log', 'sinks', i, 'name'], `duplicate sink name "${name}" (give each sink of the same type a name)`)
    names.add(name)
    if (sink.type === 'file') {
      if (sink.path === undefined) report(['access_log', 'sinks', i, 'path'], 'required when type is file')
      if (config.server.workers !== 1) report(['access_log', 'sinks', i, 'type'], 'a file sink needs server.workers: 1 (each worker would rotate the same file); use stdout, syslog or http with several workers')
    }
    if (sink.type === 'syslog') {
      if (sink.host === undefined) report(['access_log', 'sinks', i, 'host'], 'required when type is syslog')
      if (sink.port === undefined) report(['access_log', 'sinks', i, 'port'], 'required when type is syslog')
    }
    if (sink.type === 'http' && sink.url === undefined) report(['access_log', 'sinks', i, 'url'], 'required when type is http')
    for (const key of sink.type === 'http' ? [] : HTTP_ONLY) {
      if (sink[key] !== undefined) report(['access_log', 'sinks', i, key], `only an http sink takes ${key}`)
    }
    for (const key of sink.type === 'file' ? [] : FILE_ONLY) {
      if (sink[key] !== undefined) report(['access_log', 'sinks', i, key], `only a file sink takes ${key}`)
    }
    for (const key of sink.type === 'syslog' ? [] : SYSLOG_ONLY) {
      if (sink[key] !== undefined) report(['access_log', 'sinks', i, key], `only a syslog sink takes ${key}`)
    }
  })
}
