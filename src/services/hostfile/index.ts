import { Type, type Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { ServiceModule } from '../service-module.js'
import { requiredServiceSettings, settingsProperties } from '../service-settings.js'
import { authorHostFile } from './author-file.js'

/** `services.hostfile` settings beside prefix, envelope, policies and routes: one declaration, schema and type. */
export const HostfileSettingsSchema = Type.Object({
  max_records: Type.Integer({
    minimum: 1,
    maximum: 1000000,
    default: 10000,
    description: 'Most records one host file may hold; more answers 400 hostfile_too_many_records.',
  }),
})

export type HostfileSettings = Static<typeof HostfileSettingsSchema>

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
    errors: ['validation_failed', 'hostfile_record_validation_failed', 'hostfile_unknown_record_type', 'hostfile_unorderable_record', 'hostfile_too_many_records'],
  }],
  settingsSchema: settingsProperties(HostfileSettingsSchema),
  build () {
    return {
      handlers: {
        author: async function authorHostFileHandler (request: FastifyRequest) {
          const settings = requiredServiceSettings(request.gw.snapshot.config, 'hostfile', HostfileSettingsSchema)
          return authorHostFile(request.body, { maxRecords: settings.max_records })
        },
      },
    }
  },
}

export default hostfileService
