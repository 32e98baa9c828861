import type { FastifyInstance } from 'fastify'
import type { Booted } from './boot.js'
import { buildAdminServer, listenAdmin, processAdminDeps } from './observability/admin-server.js'
import { adminSettings } from './observability/admin-settings.js'

/**
 * Starts the admin listener of a booted gateway on `admin.host:admin.port` and logs its URL; undefined with
 * `admin: false`. It is closed after the public app, so /readyz keeps answering 503 throughout a drain.
 */
export async function startAdminListener (booted: Booted): Promise<FastifyInstance | undefined> {
  const settings = adminSettings(booted.gateway.current().config)
  if (settings === undefined || booted.metrics === undefined) return undefined
  const admin = buildAdminServer(processAdminDeps(booted.metrics, booted.readiness, () => booted.gateway.current().version))
  await listenAdmin(admin, settings, booted.logger)
  return admin
}
