import { Type, type Static } from '@sinclair/typebox'
import type { GatewayConfig } from '../../config/types.js'
import { requiredServiceSettings, settingsProperties } from '../service-settings.js'

const LANE_PATH = '^/[A-Za-z0-9._~/:-]*$'

const int = (description: string, minimum: number, def: number, maximum?: number) =>
  Type.Integer({ description, minimum, ...(maximum === undefined ? {} : { maximum }), default: def })

/** One registered fan-out operation (`services.fanout.operations.<operation_type>`). */
export const FanoutOperationSchema = Type.Object({
  description: Type.String({ description: 'What the operation changes at a store.', default: '' }),
  payload_schema: Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'JSON Schema (draft-07) of the request payload; violations answer 422 fanout_payload_validation_failed.' }),
  preview_path: Type.String({ pattern: LANE_PATH, description: 'Lane path (below the lane base_url) the preview is POSTed to.' }),
  apply_path: Type.String({ pattern: LANE_PATH, description: 'Lane path (below the lane base_url) the apply is POSTed to, with Idempotency-Key <dispatch_id>:<store_org_id>.' }),
}, { additionalProperties: false, description: 'One fan-out operation.' })

export type FanoutOperation = Static<typeof FanoutOperationSchema>

/** `services.fanout` settings beside prefix, envelope, policies and routes: one declaration, schema and type. */
export const FanoutSettingsSchema = Type.Object({
  // A map with a key pattern, written as plain JSON Schema (ajv's propertyNames) rather than TypeBox's Record.
  operations: Type.Unsafe<Record<string, FanoutOperation>>({
    type: 'object',
    description: 'Registered operations by operation_type; a request naming another answers 404 fanout_operation_not_found.',
    propertyNames: { pattern: '^[a-z][a-z0-9_.-]{0,63}$' },
    additionalProperties: FanoutOperationSchema,
    default: {},
  }),
  max_stores: int('Most stores one dispatch may target; more answers 400 fanout_too_many_stores.', 1, 50, 10000),
  max_payload_bytes: int('Largest payload (serialized JSON, bytes); larger answers 413 payload_too_large.', 2, 65536),
  retry: Type.Object({
    attempts: int('Apply attempts per store in total, the first included.', 1, 5, 100),
    base_delay_ms: int('Delay before the second attempt; doubled for each later one.', 0, 1000),
    max_delay_ms: int('Cap of the delay between attempts.', 0, 30000),
  }, { additionalProperties: false, default: {}, description: 'Retries of a store\'s apply on lane 5xx, 408, 429, timeouts and network failures (other 4xx fail at once).' }),
  lane_timeout_ms: int('Time allowed for one lane call (preview or apply attempt) to answer completely.', 1, 10000),
  concurrency: int('Lane calls in flight at once per dispatch; a slow lane holds one slot and never blocks the others\' retries.', 1, 8, 1000),
  commit_wait_ms: int('How long commit waits for every store to settle: 200 with the final status when they do, else 202 with status committing (poll GET).', 0, 10000),
  recovery: Type.Object({
    lease_ms: int('A delivering worker renews its lease on the dispatch this often x3; after a crash, the dispatch is resumed once the lease has run out.', 100, 30000),
    sweep_interval_ms: int('How often each instance looks for committing dispatches with an expired lease (also once at start).', 50, 5000),
  }, { additionalProperties: false, default: {}, description: 'Resuming deliveries whose worker died (crash, kill -9, another instance).' }),
})

export type FanoutSettings = Static<typeof FanoutSettingsSchema>

/** JSON Schema properties of the settings (the loader checks them and fills the defaults). */
export const fanoutSettingsSchema = settingsProperties(FanoutSettingsSchema)

/** The fan-out settings of a validated config (every default filled in by the loader). */
export function fanoutSettingsOf (config: GatewayConfig): FanoutSettings {
  return requiredServiceSettings(config, 'fanout', FanoutSettingsSchema)
}
