// @ts-check
/**
 * An outside policy that uses the response phase (docs/plugins.md, "The response phase"): it appends one JSON line
 * per answer of its routes to a file, once the answer is sent, and tells the caller the id it was logged under.
 * gateway.yaml loads it with
 *
 *   plugins:
 *     - ./plugins/audit-log.js
 *
 * and names it in a chain, usually first so that refusals of later steps are logged too:
 *
 *   - audit-log: { file: ./data/audit.log }
 *
 * Each line: {"time","request_id","method","url","service","route","client","status","completed","ms"}.
 * `client` is the caller's client id when an `auth` step ran before this one, else null.
 */
import { createWriteStream } from 'node:fs'
import { resolve } from 'node:path'

/**
 * @typedef {{ file: string, header?: string }} Options
 * @typedef {import('lanegate/plugin').SentResponse} SentResponse
 * @typedef {import('lanegate/plugin').ResponseHead} ResponseHead
 */

/**
 * One append stream per file, shared by every route and snapshot that logs there: `create` runs per route on each
 * reload, and reopening the file each time would leak descriptors.
 * @type {Map<string, import('node:fs').WriteStream>}
 */
const streams = new Map()

/** @param {string} file */
function streamFor (file) {
  const path = resolve(file)
  let stream = streams.get(path)
  if (stream === undefined) {
    stream = createWriteStream(path, { flags: 'a' })
    streams.set(path, stream)
  }
  return stream
}

/** @type {import('lanegate/plugin').PolicyPlugin<Options>} */
const auditLog = {
  name: 'audit-log',
  description: 'Appends one JSON line per answer (status, caller, duration) to a file, after the answer is sent.',
  schema: {
    type: 'object',
    description: 'Where the audit lines go.',
    additionalProperties: false,
    required: ['file'],
    properties: {
      file: { type: 'string', minLength: 1, description: 'The file the lines are appended to (relative to the gateway\'s working directory).' },
      header: { type: 'string', default: 'X-Audit-Id', pattern: '^[A-Za-z0-9-]+$', description: 'The response header that carries the id the answer was logged under.' },
    },
  },
  summarize: (options) => `audit log to ${options.file}`,
  explain: (options) => ({ outcome: 'pass', note: `never refuses; logs the answer to ${options.file}` }),
  refusals: () => [],
  create (options, context) {
    const stream = streamFor(options.file)
    const header = /** @type {string} */ (options.header)
    // The hooks are built once here, not per request: a request only registers them.
    /** @param {ResponseHead} head @param {import('fastify').FastifyRequest} request */
    function stampAuditId (head, request) {
      head.setHeader(header, String(request.id))
    }
    /** @param {SentResponse} sent @param {import('fastify').FastifyRequest} request */
    function writeAuditLine (sent, request) {
      stream.write(JSON.stringify({
        time: new Date().toISOString(),
        request_id: String(request.id),
        method: request.method,
        url: request.url,
        service: context.service,
        route: context.routeId,
        client: context.principal(request)?.clientId ?? null,
        status: sent.status,
        completed: sent.completed,
        ms: Math.round(sent.elapsedMs),
      }) + '\n')
    }
    return function auditLogStep (_request, reply) {
      context.onResponseHead(reply, stampAuditId)
      context.onResponseSent(reply, writeAuditLine)
    }
  },
}

export default auditLog
