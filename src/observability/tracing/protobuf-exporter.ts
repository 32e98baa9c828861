import { OTLPExporterBase, type OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { ProtobufTraceSerializer, TraceExporterMetricsHelper, type IExportTraceServiceResponse, type ISerializer } from '@opentelemetry/otlp-transformer'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'
import { OtlpTraceEncoder } from './otlp-trace-encoder.js'

/**
 * The OTLP/HTTP protobuf span exporter: the SDK's `OTLPTraceExporter` of @opentelemetry/exporter-trace-otlp-proto
 * (the same transport, retries, headers, timeout, concurrency limit and self-observability component), with the
 * request body written by lanegate's encoder instead of the SDK's serializer, which spent most of a span's export
 * measuring and copying strings one character at a time. The collector's answer is still read by the SDK.
 */
export class ProtobufSpanExporter extends OTLPExporterBase<ReadableSpan[]> implements SpanExporter {
  constructor (config: OTLPExporterNodeConfigBase) {
    const options = convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' })
    super(createOtlpHttpExportDelegate(options, encodingSerializer(), 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined))
  }
}

function encodingSerializer (): ISerializer<ReadableSpan[], IExportTraceServiceResponse> {
  const encoder = new OtlpTraceEncoder()
  return {
    serializeRequest: (spans) => encoder.encode(spans),
    deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
  }
}
