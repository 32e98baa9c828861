import type { FastifyRequest } from 'fastify'
import type { SplitCaller } from '../upstream/split.js'

/**
 * What a split reads of a request: the caller's client and organization, its headers, and the store it is for
 * (`storeId` when the service knows it, as the live proxy does; else the store the organization policy resolved).
 */
export function splitCaller (request: FastifyRequest, storeId = request.gw.reached?.store?.id): SplitCaller {
  const { principal } = request.gw
  return {
    clientId: principal?.clientId,
    organizationId: principal?.organizationId,
    storeId,
    header (name) {
      const value = request.headers[name.toLowerCase()]
      return Array.isArray(value) ? value[0] : value
    },
  }
}
