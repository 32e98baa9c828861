import { Type, type TUnsafe } from '@sinclair/typebox'

/** Every field an access line can carry, in the order a line writes them (docs/operations.md, Access log). */
export const ACCESS_LOG_FIELDS = [
  'time', 'request_id', 'trace_id', 'client_ip', 'method', 'service', 'route', 'path', 'status', 'bytes_in',
  'bytes_out', 'duration_ms', 'upstream', 'upstream_ms', 'client_id', 'organization_id', 'refused_by', 'limit', 'error',
] as const

export type AccessLogField = typeof ACCESS_LOG_FIELDS[number]

/** Syslog facilities by name, in the order of their numbers (RFC 5424 §6.2.1: local0 is 16). */
export const SYSLOG_FACILITIES = [
  'kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp', 'ntp', 'audit', 'alert', 'clock',
  'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7',
] as const

export type SyslogFacility = typeof SYSLOG_FACILITIES[number]

const field: TUnsafe<AccessLogField> = Type.Unsafe<AccessLogField>({ type: 'string', enum: [...ACCESS_LOG_FIELDS], description: 'One access-line field.' })

/**
 * One place an access line goes. One object for every sink type (the type-specific keys optional, checked against
 * `type` by access-log-checks.ts): a union would make ajv report every branch's errors for one typo.
 */
const sink = Type.Object({
  type: Type.Unsafe<'stdout' | 'file' | 'syslog' | 'http'>({ type: 'string', enum: ['stdout', 'file', 'syslog', 'http'], description: 'stdout (the process\'s standard output, beside its log lines), file (appended, rotated), syslog (RFC 5424 over UDP or TCP) or http (batched JSON POSTs).' }),
  name: Type.Optional(Type.String({ description: 'The sink\'s label in lanegate_access_log_dropped_total (default: its type); unique among the sinks.', pattern: '^[a-z][a-z0-9_-]{0,39}$' })),
  path: Type.Optional(Type.String({ description: 'type file: the file, relative to the config file\'s folder; its folder must exist.', minLength: 1 })),
  max_bytes: Type.Optional(Type.Integer({ description: 'type file: rotate once the file would grow past this many bytes.', minimum: 1024 })),
  daily: Type.Optional(Type.Boolean({ description: 'type file: rotate when the UTC day changes.' })),
  keep: Type.Optional(Type.Integer({ description: 'type file: rotated files kept (path.1 the newest … path.<keep>); older ones are deleted. Default 7.', minimum: 1, maximum: 1000 })),
  host: Type.Optional(Type.String({ description: 'type syslog: the syslog server\'s address.', minLength: 1 })),
  port: Type.Optional(Type.Integer({ description: 'type syslog: its port (514 is the usual one).', minimum: 1, maximum: 65535 })),
  transport: Type.Optional(Type.Unsafe<'udp' | 'tcp'>({ type: 'string', enum: ['udp', 'tcp'], description: 'type syslog: udp (one datagram per line; default) or tcp (RFC 6587 octet counting).' })),
  facility: Type.Optional(Type.Unsafe<SyslogFacility>({ type: 'string', enum: [...SYSLOG_FACILITIES], description: 'type syslog: the facility of every line (default local0); the severity is always info.' })),
  app_name: Type.Optional(Type.String({ description: 'type syslog: the APP-NAME field (default lanegate).', pattern: '^[!-~]{1,48}$' })),
  url: Type.Optional(Type.String({ description: 'type http: the endpoint lines are POSTed to, as JSON arrays.', pattern: '^https?://' })),
  headers: Type.Optional(Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string', description: 'A header value (use ${ENV} for a credential).' }, description: 'type http: headers sent with every request (an API key: take it from ${ENV}).' })),
  batch_lines: Type.Optional(Type.Integer({ description: 'type http: most lines per request (default 500); fewer are sent at least every second.', minimum: 1, maximum: 100_000 })),
  retries: Type.Optional(Type.Integer({ description: 'type http: tries after the first when the endpoint answers 429/5xx or not at all (default 3); then the batch is dropped and counted.', minimum: 0, maximum: 10 })),
  buffer_bytes: Type.Optional(Type.Integer({ description: 'Most bytes of lines held while the sink is slower than the traffic; lines past it are dropped and counted. Default 8 MiB.', minimum: 1024, maximum: 1_073_741_824 })),
}, { description: 'One access-log sink.', additionalProperties: false })

/** `access_log:` — one line per answered request, to the sinks listed (absent: no access log). */
export const accessLog = Type.Object({
  fields: Type.Optional(Type.Array(field, { description: 'The fields each line carries, in the documented order whatever the order here (default: all).', minItems: 1, uniqueItems: true })),
  sinks: Type.Array(sink, { description: 'Where access lines go; every sink is bounded and never holds up a request.', minItems: 1 }),
}, { description: 'The access log: one JSON line per answered request at any log level (off when absent). Applied on reload.', additionalProperties: false })
