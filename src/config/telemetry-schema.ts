import { Type } from '@sinclair/typebox'

/** `telemetry.traces`: spans exported over OTLP/HTTP (docs/operations.md, Tracing). */
const traces = Type.Object({
  endpoint: Type.String({ description: 'The collector\'s OTLP/HTTP traces URL, e.g. http://otel-collector:4318/v1/traces.', pattern: '^https?://' }),
  protocol: Type.Unsafe<'http/protobuf' | 'http/json'>({ type: 'string', enum: ['http/protobuf', 'http/json'], description: 'OTLP encoding: http/protobuf (default) or http/json.', default: 'http/protobuf' }),
  headers: Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string', description: 'A header value (use ${ENV} for a credential).' }, description: 'Headers sent with every export (a collector\'s API key: take it from ${ENV}).', default: {} }),
  sample_ratio: Type.Number({ description: 'Share of the traces the gateway starts (or decides for) that are recorded, 0 to 1.', minimum: 0, maximum: 1, default: 1 }),
  parent_based: Type.Boolean({ description: 'true: a caller\'s traceparent decides (its sampled flag); false: sample_ratio decides every trace.', default: true }),
  max_queue: Type.Integer({ description: 'Most finished spans held for export; past it spans are dropped and counted (lanegate_traces_dropped_total).', minimum: 1, maximum: 1_000_000, default: 2048 }),
  batch_size: Type.Integer({ description: 'Most spans per export request (at most max_queue).', minimum: 1, maximum: 100_000, default: 512 }),
  service_name: Type.String({ description: 'The service.name resource attribute of every span.', minLength: 1, default: 'lanegate' }),
}, { description: 'Span export over OTLP/HTTP (absent: no spans).', additionalProperties: false })

/** `telemetry:` — traces leave the gateway (off when absent). Applied on reload. */
export const telemetry = Type.Object({
  traces: Type.Optional(traces),
}, { description: 'OpenTelemetry export (off when absent); applied on reload.', additionalProperties: false })
