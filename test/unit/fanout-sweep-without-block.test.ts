import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import { createDeliveryRunner } from '../../src/services/fanout/delivery.js'
import type { DispatchStore } from '../../src/store/dispatch-store.js'
import { createSharedUpstreams } from '../../src/upstream/registry.js'
import { baseTestConfig } from '../helpers/base-config.js'

/**
 * A reload that removes `services.fanout` leaves the delivery runner of the boot-time block running: its sweep
 * must resume nothing and log no error (it threw "services.fanout is not configured" on every sweep), and resume
 * again once a reload brings the block back.
 */
t.test('the recovery sweep resumes nothing, and logs no error, while the fan-out block is removed', async (t) => {
  const errors: unknown[] = []
  const logger = { error: (...args: unknown[]) => { errors.push(args) }, info: () => {}, warn: () => {} } as unknown as FastifyBaseLogger
  let claims = 0
  const store = { claimExpired: async () => { claims++; return [] } } as unknown as DispatchStore
  const withBlock = baseTestConfig({ services: { fanout: { prefix: '/v1/fanout', envelope: 'exchange', policies: [], routes: {}, operations: {}, recovery: { lease_ms: 30000, sweep_interval_ms: 5000 } } as never } })
  const withoutBlock = baseTestConfig({ services: {} })
  let config = withoutBlock
  const upstreams = createSharedUpstreams()
  t.teardown(() => upstreams.close())
  const runner = createDeliveryRunner({ store, currentConfig: () => config, logger, lanes: upstreams.lanes })
  await runner.sweep()
  t.same({ claims, errors }, { claims: 0, errors: [] }, 'nothing claimed, nothing logged')
  config = withBlock
  await runner.sweep()
  t.same({ claims, errors }, { claims: 1, errors: [] }, 'the block is back: the sweep claims again')
  await runner.close()
})
