import type { FastifyRequest } from 'fastify'
import type { ServiceModule } from '../service-module.js'
import { authorHostFile } from './author-file.js'

/** `services.hostfile` settings beside prefix, envelope, policies and routes. */
export interface HostfileSettings {
  max_records: number
}

export const DEFAULT_MAX_RECORDS = 10000

/**
 * Host-file authoring: `POST <prefix>/files/author` turns a JSON list of records into a store host file, checked
 * field by field and ordered parents-first. Pure: no store, no lane calls. Suggested chain: `auth` →
 * `token-type` → `scope: exchange:hostfile.author`.
 */
export const hostfileService: ServiceModule = {
  name: 'hostfile',
  description: 'Host-file authoring (records → an ordered, validated store host file).',
  routes: [{
    id: 'author',
    method: 'POST',
    url: '/files/author',
    description: 'Authors a host file from records. Scope: exchange:hostfile.author.',
    scopes: ['exchange:hostfile.author'],
  }],
  settingsSchema: {
    max_records: {
      type: 'integer',
      minimum: 1,
      maximum: 1000000,
      default: DEFAULT_MAX_RECORDS,
      description: 'Most records one host file may hold; more answers 400 hostfile_too_many_records.',
    },
  },
  build () {
    return {
      handlers: {
        author: async function authorHostFileHandler (request: FastifyRequest) {
          const settings = request.gw.snapshot.config.services.hostfile as unknown as Partial<HostfileSettings> | undefined
          return authorHostFile(request.body, { maxRecords: settings?.max_records ?? DEFAULT_MAX_RECORDS })
        },
      },
    }
  },
}

export default hostfileService
