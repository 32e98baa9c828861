import t from 'tap'
import { ConfigError } from '../../../src/config/config-error.js'
import { parseGatewayConfig } from '../../../src/config/second-pass/load-gateway-config.js'
import { catalog } from '../../../src/pipeline/registry.js'

const base = `
issuer:
  issuer: http://localhost:8080
scopes:
  a:read: { description: A }
`

async function problemsOf (text: string): Promise<{ path: string, line?: number, message: string }[]> {
  try {
    await parseGatewayConfig(text, '/etc/lanegate/g.yaml', { env: {} }, catalog)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => ({ ...p }))
    throw error
  }
  return []
}

t.test('access_log is off when absent, and a file sink\'s path is relative to the config file\'s folder', async (t) => {
  t.equal((await parseGatewayConfig(base, '/etc/lanegate/g.yaml', { env: {} }, catalog)).config.access_log, undefined)
  const text = `${base}access_log:\n  fields: [status, time]\n  sinks:\n    - { type: stdout }\n    - { type: file, path: logs/access.log, max_bytes: 1048576, daily: true, keep: 3 }\n`
  const { config } = await parseGatewayConfig(text, '/etc/lanegate/g.yaml', { env: {} }, catalog)
  t.same(config.access_log, {
    fields: ['status', 'time'],
    sinks: [{ type: 'stdout' }, { type: 'file', path: '/etc/lanegate/logs/access.log', max_bytes: 1048576, daily: true, keep: 3 }],
  })
})

t.test('each bad access_log setting is an error at its YAML path and line', async (t) => {
  const text = `${base}access_log:
  fields: [status, colour]
  sinks:
    - { type: syslogd }
    - { type: file, max_bytes: 10 }
`
  t.same(await problemsOf(text), [
    { path: 'access_log.fields[1]', line: 7, message: 'must be one of: time, request_id, trace_id, client_ip, method, service, route, path, status, bytes_in, bytes_out, duration_ms, upstream, upstream_ms, client_id, organization_id, refused_by, limit, error' },
    { path: 'access_log.sinks[0].type', line: 9, message: 'must be one of: stdout, file, syslog, http' },
    { path: 'access_log.sinks[1].max_bytes', line: 10, message: 'must be >= 1024' },
    { path: 'access_log.sinks[1].path', line: 10, message: 'required when type is file' },
  ])
})

t.test('a sink\'s keys must fit its type; names are unique; a file sink needs a path and one process', async (t) => {
  const text = `${base}server:
  workers: 2
access_log:
  sinks:
    - { type: stdout, path: /var/log/a.log, keep: 2 }
    - { type: stdout }
    - { type: file }
`
  t.same(await problemsOf(text), [
    { path: 'access_log.sinks[0].path', line: 10, message: 'only a file sink takes path' },
    { path: 'access_log.sinks[0].keep', line: 10, message: 'only a file sink takes keep' },
    { path: 'access_log.sinks[1].name', line: 11, message: 'duplicate sink name "stdout" (give each sink of the same type a name)' },
    { path: 'access_log.sinks[2].path', line: 12, message: 'required when type is file' },
    { path: 'access_log.sinks[2].type', line: 12, message: 'a file sink needs server.workers: 1 (each worker would rotate the same file); use stdout, syslog or http with several workers' },
  ])
})

t.test('a syslog sink needs host and port and takes no file keys; other sinks take no syslog keys', async (t) => {
  const text = `${base}access_log:
  sinks:
    - { type: syslog, path: /var/log/a.log }
    - { type: stdout, transport: tcp }
`
  t.same(await problemsOf(text), [
    { path: 'access_log.sinks[0].host', line: 8, message: 'required when type is syslog' },
    { path: 'access_log.sinks[0].port', line: 8, message: 'required when type is syslog' },
    { path: 'access_log.sinks[0].path', line: 8, message: 'only a file sink takes path' },
    { path: 'access_log.sinks[1].transport', line: 9, message: 'only a syslog sink takes transport' },
  ])
})

t.test('an http sink needs a url; its keys belong to it alone', async (t) => {
  const text = `${base}access_log:
  sinks:
    - { type: http, batch_lines: 10 }
    - { type: stdout, name: out, retries: 2 }
`
  t.same(await problemsOf(text), [
    { path: 'access_log.sinks[0].url', line: 8, message: 'required when type is http' },
    { path: 'access_log.sinks[1].retries', line: 9, message: 'only an http sink takes retries' },
  ])
})
