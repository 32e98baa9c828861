import type { FastifyInstance } from 'fastify'
import type { Booted } from './boot.js'
import { buildAdminServer, listenAdmin, processAdminDeps } from '../observability/admin-server.js'
import { adminSettings } from '../observability/admin-settings.js'
import { mountConsole } from '../console/console-routes.js'
import { processConsoleSource } from '../console/process-console.js'
import { startConsoleState } from '../console/console-state.js'
import { mountConfigStoreRoutes, type ConfigStoreRoutesOptions } from '../config-store/admin-routes.js'

/**
 * Starts the admin listener of a booted gateway on `admin.host:admin.port` and logs its URL; undefined with
 * `admin: false`. It is closed after the public app, so /readyz keeps answering 503 throughout a drain.
 */
export async function startAdminListener (booted: Booted, store?: ConfigStoreRoutesOptions): Promise<FastifyInstance | undefined> {
  const settings = adminSettings(booted.gateway.current().config)
  if (settings === undefined || booted.metrics === undefined) return undefined
  const state = startConsoleState(booted.metrics)
  const config = booted.gateway.current().config
  const admin = buildAdminServer({
    ...processAdminDeps(booted.metrics, booted.readiness, () => booted.gateway.current().version),
    extend: (app) => {
      mountConsole(app, config.admin === false ? undefined : config.admin, processConsoleSource(booted, state))
      // The config store's versions and fleet when following one (else only /config/store), behind the same admin.auth.
      mountConfigStoreRoutes(app, store)
    },
  })
  await listenAdmin(admin, settings, booted.logger)
  return admin
}
