import type { ServerResponse } from 'node:http'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { definePolicy, type StepOutcome } from '../../src/plugin.js'
import { headersSchema } from './schema.js'

/**
 * `headers`: sets and removes request headers before the handler (or the lane upstream) reads them, and response
 * headers after the handler (or the lane) answered — so a response `remove` also strips what the handler set.
 * Request changes are made to the request's own header object when the step runs (its place in the chain is
 * when). Response changes are applied as the head is written: the step wraps this one response's `writeHead`,
 * which every answer goes through (fastify's replies, refusals, and the live proxy's relayed heads alike).
 */
const headers = definePolicy({
  name: 'headers',
  description: 'Sets and removes request headers before the handler and response headers after it.',
  schema: headersSchema,
  summarize: (options) => [
    options.request && `request ${describe(options.request)}`,
    options.response && `response ${describe(options.response)}`,
  ].filter(Boolean).join('; '),
  refusals: () => [],
  explain: (options) => ({ outcome: 'pass', note: `never refuses; ${[options.request && `request ${describe(options.request)}`, options.response && `response ${describe(options.response)}`].filter(Boolean).join('; ') || 'no changes'}` }),
  create (options) {
    const requestSet = Object.entries(options.request?.set ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const)
    const requestRemove = (options.request?.remove ?? []).map((name) => name.toLowerCase())
    const responseSet = Object.entries(options.response?.set ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const)
    const responseRemove = (options.response?.remove ?? []).map((name) => name.toLowerCase())
    const changesResponse = responseSet.length > 0 || responseRemove.length > 0

    return function headersStep (request: FastifyRequest, reply: FastifyReply): StepOutcome {
      const incoming = request.raw.headers
      for (const name of requestRemove) delete incoming[name]
      for (const [name, value] of requestSet) incoming[name] = value
      if (changesResponse) rewriteHead(reply.raw, responseSet, responseRemove)
    }
  },
})

/** Applies the response changes when `res`'s head is written, over whatever headers were set by then. */
function rewriteHead (res: ServerResponse, set: readonly (readonly [string, string])[], remove: readonly string[]): void {
  const writeHead = res.writeHead
  res.writeHead = function writeChangedHead (this: ServerResponse, ...args: unknown[]) {
    const given = args.find((a): a is Record<string, unknown> => typeof a === 'object' && a !== null && !Array.isArray(a))
    for (const name of remove) {
      res.removeHeader(name)
      if (given !== undefined) deleteHeader(given, name)
    }
    for (const [name, value] of set) {
      if (given !== undefined) {
        deleteHeader(given, name)
        given[name] = value
      } else {
        res.setHeader(name, value)
      }
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args)
  } as ServerResponse['writeHead']
}

/** Header objects passed to writeHead may use any case. */
function deleteHeader (headers: Record<string, unknown>, lowerName: string): void {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === lowerName) delete headers[key]
}

function describe (changes: { set?: Record<string, string>, remove?: string[] }): string {
  return [changes.set && `set ${Object.keys(changes.set).join(', ')}`, changes.remove && `remove ${changes.remove.join(', ')}`].filter(Boolean).join(', ')
}

export default headers
