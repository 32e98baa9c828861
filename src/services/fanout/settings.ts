import type { GatewayConfig } from '../../config/types.js'

/** One registered fan-out operation (`services.fanout.operations.<operation_type>`). */
export interface FanoutOperation {
  description: string
  /** JSON Schema (draft-07) the request's `payload` must satisfy. */
  payload_schema: Record<string, unknown>
  /** Lane path the preview is POSTed to, below the lane's base_url. */
  preview_path: string
  /** Lane path the apply is POSTed to, below the lane's base_url. */
  apply_path: string
}

/** `services.fanout` settings beside prefix, envelope, policies and routes (defaults filled by config validation). */
export interface FanoutSettings {
  operations: Record<string, FanoutOperation>
  max_stores: number
  max_payload_bytes: number
  retry: { attempts: number, base_delay_ms: number, max_delay_ms: number }
  lane_timeout_ms: number
  concurrency: number
  commit_wait_ms: number
  recovery: { lease_ms: number, sweep_interval_ms: number }
}

export const fanoutDefaults: FanoutSettings = {
  operations: {},
  max_stores: 50,
  max_payload_bytes: 65536,
  retry: { attempts: 5, base_delay_ms: 1000, max_delay_ms: 30000 },
  lane_timeout_ms: 10000,
  concurrency: 8,
  commit_wait_ms: 10000,
  recovery: { lease_ms: 30000, sweep_interval_ms: 5000 },
}

const LANE_PATH = '^/[A-Za-z0-9._~/:-]*$'

const int = (description: string, minimum: number, def: number, maximum?: number): Record<string, unknown> =>
  ({ type: 'integer', description, minimum, ...(maximum === undefined ? {} : { maximum }), default: def })

/** JSON Schema properties of the settings (config pass 1 fills the defaults). */
export const fanoutSettingsSchema: Record<string, Record<string, unknown>> = {
  operations: {
    type: 'object',
    description: 'Registered operations by operation_type; a request naming another answers 404 fanout_operation_not_found.',
    propertyNames: { pattern: '^[a-z][a-z0-9_.-]{0,63}$' },
    additionalProperties: {
      type: 'object',
      description: 'One fan-out operation.',
      additionalProperties: false,
      required: ['payload_schema', 'preview_path', 'apply_path'],
      properties: {
        description: { type: 'string', description: 'What the operation changes at a store.', default: '' },
        payload_schema: { type: 'object', description: 'JSON Schema (draft-07) of the request payload; violations answer 422 fanout_payload_validation_failed.' },
        preview_path: { type: 'string', pattern: LANE_PATH, description: 'Lane path (below the lane base_url) the preview is POSTed to.' },
        apply_path: { type: 'string', pattern: LANE_PATH, description: 'Lane path (below the lane base_url) the apply is POSTed to, with Idempotency-Key <dispatch_id>:<store_org_id>.' },
      },
    },
    default: {},
  },
  max_stores: int('Most stores one dispatch may target; more answers 400 fanout_too_many_stores.', 1, fanoutDefaults.max_stores, 10000),
  max_payload_bytes: int('Largest payload (serialized JSON, bytes); larger answers 413 payload_too_large.', 2, fanoutDefaults.max_payload_bytes),
  retry: {
    type: 'object',
    description: 'Retries of a store\'s apply on lane 5xx, 408, 429, timeouts and network failures (other 4xx fail at once).',
    additionalProperties: false,
    properties: {
      attempts: int('Apply attempts per store in total, the first included.', 1, fanoutDefaults.retry.attempts, 100),
      base_delay_ms: int('Delay before the second attempt; doubled for each later one.', 0, fanoutDefaults.retry.base_delay_ms),
      max_delay_ms: int('Cap of the delay between attempts.', 0, fanoutDefaults.retry.max_delay_ms),
    },
    default: {},
  },
  lane_timeout_ms: int('Time allowed for one lane call (preview or apply attempt) to answer completely.', 1, fanoutDefaults.lane_timeout_ms),
  concurrency: int('Lane calls in flight at once per dispatch; a slow lane holds one slot and never blocks the others\' retries.', 1, fanoutDefaults.concurrency, 1000),
  commit_wait_ms: int('How long commit waits for every store to settle: 200 with the final status when they do, else 202 with status committing (poll GET).', 0, fanoutDefaults.commit_wait_ms),
  recovery: {
    type: 'object',
    description: 'Resuming deliveries whose worker died (crash, kill -9, another instance).',
    additionalProperties: false,
    properties: {
      lease_ms: int('A delivering worker renews its lease on the dispatch this often x3; after a crash, the dispatch is resumed once the lease has run out.', 100, fanoutDefaults.recovery.lease_ms),
      sweep_interval_ms: int('How often each instance looks for committing dispatches with an expired lease (also once at start).', 50, fanoutDefaults.recovery.sweep_interval_ms),
    },
    default: {},
  },
}

/** The fan-out settings of a config, defaults filled in (validation fills them too; this keeps tests terse). */
export function fanoutSettingsOf (config: GatewayConfig): FanoutSettings {
  const raw = (config.services.fanout ?? {}) as Partial<FanoutSettings>
  return {
    operations: raw.operations ?? fanoutDefaults.operations,
    max_stores: raw.max_stores ?? fanoutDefaults.max_stores,
    max_payload_bytes: raw.max_payload_bytes ?? fanoutDefaults.max_payload_bytes,
    retry: { ...fanoutDefaults.retry, ...raw.retry },
    lane_timeout_ms: raw.lane_timeout_ms ?? fanoutDefaults.lane_timeout_ms,
    concurrency: raw.concurrency ?? fanoutDefaults.concurrency,
    commit_wait_ms: raw.commit_wait_ms ?? fanoutDefaults.commit_wait_ms,
    recovery: { ...fanoutDefaults.recovery, ...raw.recovery },
  }
}
