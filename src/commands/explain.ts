import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { ExplainCaller } from '../describe/explain.js'
import type { Command } from './command.js'
import { loadOrReport } from './load-or-report.js'

const USAGE = `lanegate explain --client ID [--config FILE] [--header "NAME: VALUE"]… [--json] METHOD PATH
lanegate explain --user SUBJECT --org ORG_ID [--scopes "a b"] [--config FILE] [--header …] [--json] METHOD PATH
lanegate explain --token-file FILE|- [--config FILE] [--header …] [--json] METHOD PATH

Says what the policy chain of the route METHOD PATH matches would do for a token of service account ID (all of
its scopes), or for a user token of SUBJECT in ORG_ID with those scopes: which step refuses, with which status
and code, or that it passes. --token-file reads a bearer token from FILE (- for stdin, so it stays out of the
shell's history) and verifies it as the auth policy would, showing the caller it maps to (an identity provider's
token through its issuer's claims block); the token is never printed or logged. Nothing else is sent and no store
is touched, so what only a real request knows (rate limit counters, the client address) is shown as "depends".
For a proxy route (or the live proxy) it also says which target group the request would go to and why (a split
rule, the caller's weight bucket, the fallback); --header gives the request headers a split rule reads.
  lanegate explain --client demo-status POST /api/v1/ecommerce/payment-intents`

/** `lanegate explain`. */
async function explainCommand (args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: 'string', default: 'gateway.yaml' },
      client: { type: 'string' },
      user: { type: 'string' },
      org: { type: 'string' },
      scopes: { type: 'string', default: '' },
      json: { type: 'boolean', default: false },
      'token-file': { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
    },
  })
  const [method, path] = positionals
  const headers = headersOf(values.header)
  let caller: ExplainCaller
  if (values.client !== undefined) caller = { kind: 'client', clientId: values.client }
  else if (values.user !== undefined && values.org !== undefined) caller = { kind: 'user', subject: values.user, organizationId: values.org, scopes: values.scopes.split(/\s+/).filter((s) => s !== '') }
  else caller = { kind: 'none' }
  if (method === undefined || path === undefined || positionals.length > 2 || !path.startsWith('/') || (caller.kind === 'none' && values.user !== undefined) || headers === undefined) {
    console.error(USAGE)
    return 1
  }
  const loaded = await loadOrReport(values.config)
  if (loaded === undefined) return 1
  const tokenFile = values['token-file']
  if (tokenFile !== undefined) {
    if (caller.kind !== 'none') {
      console.error(USAGE)
      return 1
    }
    const token = readFileSync(tokenFile === '-' ? 0 : tokenFile, 'utf8')
    const { principalOfToken, refusalOf } = await import('../describe/explain-token.js')
    try {
      caller = { kind: 'token', principal: await principalOfToken(token, loaded.config) }
    } catch (error) {
      console.error(`explain: the token is refused: ${refusalOf(error)}`)
      return 1
    }
  }
  const { explainRequest, formatExplanation, UnknownClientError } = await import('../describe/explain.js')
  try {
    const result = explainRequest(loaded.config, loaded.catalog, method.toUpperCase(), path, caller, headers)
    console.log(values.json ? JSON.stringify(result, null, 2) : formatExplanation(result))
    return 0
  } catch (error) {
    if (!(error instanceof UnknownClientError)) throw error
    console.error(`explain: ${error.message}`)
    return 1
  }
}

/** `--header "Name: value"` options as a map; undefined when one has no colon. */
function headersOf (options: readonly string[]): Record<string, string> | undefined {
  const headers: Record<string, string> = {}
  for (const option of options) {
    const colon = option.indexOf(':')
    if (colon <= 0) return undefined
    headers[option.slice(0, colon).trim().toLowerCase()] = option.slice(colon + 1).trim()
  }
  return headers
}

export const explain: Command = {
  name: 'explain',
  summary: "Say what a route's policy chain would do for a client (which step refuses, or that it passes)",
  usage: USAGE,
  run: explainCommand,
}
