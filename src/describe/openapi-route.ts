import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Catalog } from '../pipeline/registry.js'
import type { Snapshot } from '../runtime/snapshot.js'
import { openApiDocument } from './openapi.js'

/**
 * The `GET /openapi.json` handler: the document of the current snapshot, generated once per snapshot version (a hot
 * reload that changes routes, scopes or chains gives the next request a new document) and sent as prepared JSON.
 */
export function createOpenApiHandler (snapshot: () => Snapshot, catalog: Catalog) {
  let cached: { version: number, json: string } | undefined
  return async function openApi (_request: FastifyRequest, reply: FastifyReply): Promise<string> {
    const current = snapshot()
    if (cached?.version !== current.version) {
      cached = { version: current.version, json: JSON.stringify(openApiDocument(current.config, catalog, current.version)) }
    }
    reply.header('content-type', 'application/json; charset=utf-8')
    return cached.json
  }
}
