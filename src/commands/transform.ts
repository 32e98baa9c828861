import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { UnknownClientError, type ExplainCaller } from '../describe/explain.js'
import { tryTransform } from '../describe/try-transform.js'
import type { Command } from './command.js'
import { loadOrReport } from './load-or-report.js'

const USAGE = `lanegate transform METHOD PATH --input FILE [--response [--status N]] [--type TYPE] [--client ID] [--config FILE]

Tries the transform policy of the route METHOD PATH matches on a sample body, sending nothing. Without
--response, FILE is the caller's body and the body the upstream would get is printed (its method, path and
Content-Type on stderr). With --response, FILE is the upstream's answer (status N, default 200) and what the
caller would get is printed. A refusal prints its status and body (in the route's envelope) and exits 1.
FILE '-' reads stdin. TYPE is the sample's Content-Type (default: application/xml for a .xml file or a body
starting with '<', else application/json). --client names the service account whose principal the mappings see.
Only the route's transform steps run (auth and the other policies do not).
  lanegate transform GET /legacy/store/items/sku-100 --response --input answer.xml`

async function readInput (file: string): Promise<Buffer> {
  if (file !== '-') return readFile(file)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** `lanegate transform`: a route's mappings tried on a sample, nothing sent. */
export const transformCommand: Command = {
  name: 'transform',
  summary: 'Try a route\'s transform policy on a sample request body or upstream answer (nothing is sent)',
  usage: USAGE,
  async run (args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        config: { type: 'string', default: 'gateway.yaml' },
        input: { type: 'string' },
        response: { type: 'boolean', default: false },
        status: { type: 'string', default: '200' },
        type: { type: 'string' },
        client: { type: 'string' },
      },
    })
    const [method, path] = positionals
    const status = Number(values.status)
    if (method === undefined || path === undefined || positionals.length > 2 || !path.startsWith('/') || values.input === undefined || !Number.isInteger(status) || status < 100 || status > 599) {
      console.error(USAGE)
      return 1
    }
    const body = await readInput(values.input)
    const contentType = values.type ?? (values.input.endsWith('.xml') || body.subarray(0, 64).toString('utf8').trimStart().startsWith('<') ? 'application/xml' : 'application/json')
    const loaded = await loadOrReport(values.config)
    if (loaded === undefined) return 1
    const caller: ExplainCaller = values.client === undefined ? { kind: 'none' } : { kind: 'client', clientId: values.client }
    let result
    try {
      result = await tryTransform(loaded.config, loaded.catalog, { method: method.toUpperCase(), path, body, contentType, response: values.response, status, caller })
    } catch (error) {
      if (!(error instanceof UnknownClientError)) throw error
      console.error(`transform: ${error.message}`)
      return 1
    }
    switch (result.kind) {
      case 'none':
        console.error(`transform: ${result.reason}`)
        return 1
      case 'refused':
        console.error(`refused: ${result.status}`)
        console.log(JSON.stringify(result.body, null, 2))
        return 1
      case 'request':
        console.error(`upstream request: ${result.method} ${result.path === undefined ? '(the caller\'s path)' : result.path === '' ? '(the target\'s URL)' : result.path}; content-type: ${result.contentType ?? '(none)'}`)
        process.stdout.write(result.body)
        process.stdout.write('\n')
        return 0
      case 'response':
        console.error(`answer: ${result.status}; content-type: ${result.contentType ?? '(none)'}${result.unchanged ? ' (passed unchanged)' : ''}`)
        process.stdout.write(result.body)
        process.stdout.write('\n')
        return 0
    }
  },
}
