import { parseArgs } from 'node:util'
import type { ExplainCaller } from '../describe/explain.js'
import type { Command } from './command.js'
import { loadOrReport } from './load-or-report.js'

const USAGE = `lanegate explain --client ID [--config FILE] [--json] METHOD PATH
lanegate explain --user SUBJECT --org ORG_ID [--scopes "a b"] [--config FILE] [--json] METHOD PATH

Says what the policy chain of the route METHOD PATH matches would do for a token of service account ID (all of
its scopes), or for a user token of SUBJECT in ORG_ID with those scopes: which step refuses, with which status
and code, or that it passes. Nothing is sent and no store is touched, so what only a real request knows (rate
limit counters, the client address) is shown as "depends".
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
    },
  })
  const [method, path] = positionals
  let caller: ExplainCaller
  if (values.client !== undefined) caller = { kind: 'client', clientId: values.client }
  else if (values.user !== undefined && values.org !== undefined) caller = { kind: 'user', subject: values.user, organizationId: values.org, scopes: values.scopes.split(/\s+/).filter((s) => s !== '') }
  else caller = { kind: 'none' }
  if (method === undefined || path === undefined || positionals.length > 2 || !path.startsWith('/') || (caller.kind === 'none' && values.user !== undefined)) {
    console.error(USAGE)
    return 1
  }
  const loaded = await loadOrReport(values.config)
  if (loaded === undefined) return 1
  const { explainRequest, formatExplanation, UnknownClientError } = await import('../describe/explain.js')
  try {
    const result = explainRequest(loaded.config, loaded.catalog, method.toUpperCase(), path, caller)
    console.log(values.json ? JSON.stringify(result, null, 2) : formatExplanation(result))
    return 0
  } catch (error) {
    if (!(error instanceof UnknownClientError)) throw error
    console.error(`explain: ${error.message}`)
    return 1
  }
}

export const explain: Command = {
  name: 'explain',
  summary: "Say what a route's policy chain would do for a client (which step refuses, or that it passes)",
  usage: USAGE,
  run: explainCommand,
}
