import { resolve } from 'node:path'
import type { RouteDeclaration, ServiceModule, ServiceSettingProblem } from '../service-module.js'
import { createContentCache } from './content-cache.js'
import { ContentFolderError, loadContentFolder } from './content-source.js'
import { createListHandler } from './list-handler.js'
import { contentSettingsFrom, contentSettingsSchema } from './settings.js'

/** The routes (ids are the YAML keys under `services.content.routes`). */
export const contentRoutes: readonly RouteDeclaration[] = [
  {
    id: 'content_list',
    method: 'GET',
    url: '/content',
    description: 'Published content of the caller\'s organization tree (?type, ?page, ?per_page). Scope: engage:content.view.',
    scopes: ['engage:content.view'],
  },
  {
    id: 'circulars_list',
    method: 'GET',
    url: '/circulars',
    description: 'Published circulars of the caller\'s organization tree (?type, ?page, ?per_page). Scope: engage:circulars.view.',
    scopes: ['engage:circulars.view'],
  },
]

/**
 * The content service's public endpoints: `GET /content` and `GET /circulars` (prefix `/public/v1`), served
 * from a folder of YAML/JSON files. Callers see their organization tree's published items. Suggested chain:
 * `auth` → `rate-limit` → `scope: engage:content.view` / `engage:circulars.view`. docs/content.md has the
 * file format.
 */
export const contentService: ServiceModule = {
  name: 'content',
  description: 'Published content and circulars from a folder of YAML/JSON files, per organization tree.',
  routes: contentRoutes,
  settingsSchema: contentSettingsSchema,

  check (settings) {
    const dir = contentSettingsFrom(settings).source_dir
    try {
      loadContentFolder(dir)
      return []
    } catch (error) {
      if (!(error instanceof ContentFolderError)) throw error
      return error.problems.map((p): ServiceSettingProblem => ({ path: 'source_dir', message: `${resolve(dir, p.file)}: ${p.message}` }))
    }
  },

  build (deps) {
    const cache = createContentCache(deps.shared.logger)
    return {
      handlers: {
        content_list: createListHandler(cache, 'content'),
        circulars_list: createListHandler(cache, 'circular'),
      },
    }
  },
}

export default contentService
