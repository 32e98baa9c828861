import { parseArgs } from 'node:util'

/** What `lanegate loadtest` is asked to do. */
export interface LoadtestOptions {
  /** gateway.yaml: gives the base URL (issuer.issuer) when `url` is not set, and names the rate limits hit. */
  config?: string
  clientId: string
  clientSecret: string
  /** Space-separated scopes to ask for; the account's granted scopes when absent. */
  scope?: string
  /** Gateway base URL, e.g. http://127.0.0.1:8080. */
  url?: string
  method: string
  /** Path (and query) on the gateway, e.g. /public/v1/content. */
  path: string
  /** File whose bytes are sent as the request body. */
  bodyFile?: string
  contentType: string
  connections: number
  durationSeconds: number
  /** Print the summary as JSON instead of a table. */
  json: boolean
  /** PEM file of CA certificates to trust for an https:// gateway (a private CA), beside the system's. */
  cacert?: string
}

export const LOADTEST_USAGE = `lanegate loadtest --client ID --secret S [--config FILE] [--url URL] [--cacert FILE] [--scope "a b"]
                  METHOD PATH [--body FILE] [--content-type TYPE] [-c 50] [-d 30] [--json]

Load-tests one route of a running gateway as a real client would: obtains a client-credentials token from the
gateway's own token endpoint (base URL from --url, else from the config's issuer.issuer), refreshes it before it
expires, sends METHOD PATH with it from -c connections for -d seconds, shows a live progress line on stderr and
ends with a table: req/s, latency percentiles, status counts and the 429s, by the limit that produced them.

  --config FILE       gateway.yaml (default ./gateway.yaml when --url is not given)
  --client ID         service account client_id
  --secret S          its client secret (or set LANEGATE_CLIENT_SECRET)
  --scope "a b"       scopes to request (default: all the account may obtain)
  --url URL           gateway base URL (default: issuer.issuer of the config)
  --cacert FILE       trust the CA certificates in FILE (PEM) for an https:// gateway signed by a private CA
                      (or start node with NODE_EXTRA_CA_CERTS=FILE); the load itself does not verify certificates
  --body FILE         request body (with --content-type, default application/json)
  -c, --connections N concurrent connections (default 50)
  -d, --duration S    seconds to run (default 30)
  --json              print the summary as JSON

Example (demo config, gateway started with npm start):
  lanegate loadtest --config gateway.yaml --client demo-content --secret demo-content-secret \\
    --url http://127.0.0.1:8080 GET /public/v1/content -c 20 -d 10`

/** Thrown for a command line that cannot run (exit code 2). */
export class UsageError extends Error {}

function positive (name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${name} must be a positive number, got "${value}"`)
  return n
}

/** Parses the loadtest command line; throws UsageError naming what is wrong. */
export function parseLoadtestArgs (argv: string[], env: NodeJS.ProcessEnv = process.env): LoadtestOptions {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string' },
        client: { type: 'string' },
        secret: { type: 'string' },
        scope: { type: 'string' },
        url: { type: 'string' },
        cacert: { type: 'string' },
        body: { type: 'string' },
        'content-type': { type: 'string' },
        connections: { type: 'string', short: 'c' },
        duration: { type: 'string', short: 'd' },
        json: { type: 'boolean', default: false },
      },
    })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (positionals.length !== 2) throw new UsageError(`expected METHOD PATH, got ${positionals.length === 0 ? 'nothing' : `"${positionals.join(' ')}"`}`)
  const [method, path] = positionals
  if (!/^[A-Za-z]+$/.test(method)) throw new UsageError(`"${method}" is not an HTTP method`)
  if (!path.startsWith('/')) throw new UsageError(`PATH must start with "/", got "${path}"`)
  if (values.client === undefined) throw new UsageError('--client is required')
  const secret = values.secret ?? env.LANEGATE_CLIENT_SECRET
  if (secret === undefined) throw new UsageError('--secret (or LANEGATE_CLIENT_SECRET) is required')
  const connections = positive('--connections', values.connections, 50)
  if (!Number.isInteger(connections)) throw new UsageError(`--connections must be an integer, got "${values.connections}"`)
  return {
    config: values.config ?? (values.url === undefined ? 'gateway.yaml' : undefined),
    clientId: values.client,
    clientSecret: secret,
    ...(values.scope === undefined ? {} : { scope: values.scope }),
    ...(values.url === undefined ? {} : { url: values.url.replace(/\/+$/, '') }),
    method: method.toUpperCase(),
    path,
    ...(values.body === undefined ? {} : { bodyFile: values.body }),
    contentType: values['content-type'] ?? 'application/json',
    connections,
    durationSeconds: positive('--duration', values.duration, 30),
    json: values.json === true,
    ...(values.cacert === undefined ? {} : { cacert: values.cacert }),
  }
}
