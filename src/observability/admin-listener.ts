import type { FastifyInstance } from 'fastify'
import type { Booted } from '../boot.js'
import { buildAdminServer } from './admin-server.js'
import { adminSettings } from './admin-settings.js'

/**
 * Starts the admin listener of a booted gateway on `admin.host:admin.port` and logs its URL; undefined with
 * `admin: false`. It is closed after the public app, so /readyz keeps answering 503 throughout a drain.
 */
export async function startAdminListener (booted: Booted): Promise<FastifyInstance | undefined> {
  const settings = adminSettings(booted.gateway.current().config)
  if (settings === undefined || booted.metrics === undefined) return undefined
  const admin = buildAdminServer({
    metrics: booted.metrics,
    readiness: booted.readiness,
    configVersion: () => booted.gateway.current().version,
  })
  try {
    await admin.listen({ host: settings.host, port: settings.port })
  } catch (error) {
    await admin.close()
    throw error
  }
  const address = admin.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : settings.port
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host
  booted.logger.info({ admin_url: `http://${host}:${port}` }, `Admin listening on http://${host}:${port} (/metrics, /healthz, /readyz)`)
  return admin
}
