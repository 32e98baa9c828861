import type { FastifyReply, FastifyRequest } from 'fastify'
import { definePolicy, type ResponseHead, type ResponseHeadHook, type StepOutcome } from '../../src/plugin/index.js'
import { headersSchema } from './schema.js'

/**
 * `headers`: sets and removes request headers before the handler (or the lane upstream) reads them, and response
 * headers after the handler (or the lane) answered — so a response `remove` also strips what the handler set.
 * Request changes are made to the request's own header object when the step runs (its place in the chain is
 * when). Response changes are a head hook of the response phase (`context.onResponseHead`), which runs over every
 * answer of the route just before its head is written: fastify's replies, refusals, and relayed heads alike.
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
  create (options, context) {
    const requestSet = Object.entries(options.request?.set ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const)
    const requestRemove = (options.request?.remove ?? []).map((name) => name.toLowerCase())
    const responseSet = Object.entries(options.response?.set ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const)
    const responseRemove = (options.response?.remove ?? []).map((name) => name.toLowerCase())
    // Built once per route: a request registers it, it costs no closure.
    const changeHead: ResponseHeadHook | undefined = responseSet.length > 0 || responseRemove.length > 0
      ? function rewriteResponseHead (head: ResponseHead): void {
        for (const name of responseRemove) head.removeHeader(name)
        for (const [name, value] of responseSet) head.setHeader(name, value)
      }
      : undefined

    return function headersStep (request: FastifyRequest, reply: FastifyReply): StepOutcome {
      const incoming = request.raw.headers
      for (const name of requestRemove) delete incoming[name]
      for (const [name, value] of requestSet) incoming[name] = value
      if (changeHead !== undefined) context.onResponseHead(reply, changeHead)
    }
  },
})

function describe (changes: { set?: Record<string, string>, remove?: string[] }): string {
  return [changes.set && `set ${Object.keys(changes.set).join(', ')}`, changes.remove && `remove ${changes.remove.join(', ')}`].filter(Boolean).join(', ')
}

export default headers
