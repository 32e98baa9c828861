import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from '@opentelemetry/api'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base'
import { ProtoWriter } from './proto-writer.js'
import { RepeatedAttributes } from './repeated-attributes.js'

/** What the SDK's serializer reads of an instrumentation scope (its type declares only name, version, schemaUrl). */
interface Scope { name: string, version?: string, schemaUrl?: string, attributes?: Attributes, droppedAttributesCount?: number }

/** The first guess of a span's size, before a batch has said what spans weigh. */
const FIRST_BYTES_PER_SPAN = 512
/** Room above the last batch's bytes per span: a batch a little heavier than the one before is not copied to grow. */
const SIZE_SLACK = 1.25
const HAS_IS_REMOTE = 0x100
const IS_REMOTE = 0x200
const INT64_MIN = -(2 ** 63)
const INT64_MAX_EXCLUSIVE = 2 ** 63

/**
 * The OTLP `ExportTraceServiceRequest` of a batch of finished spans, in protobuf: the same bytes as
 * `ProtobufTraceSerializer.serializeRequest` of @opentelemetry/otlp-transformer (the same fields, in its order,
 * with its defaults and groupings; a property test holds the two byte for byte), written in one pass into a buffer
 * sized from the batch before (grown, rarely, when that was too small).
 */
export class OtlpTraceEncoder {
  #bytesPerSpan = FIRST_BYTES_PER_SPAN
  readonly #repeated = new RepeatedAttributes()

  encode (spans: ReadableSpan[]): Uint8Array {
    const writer = new ProtoWriter(256 + spans.length * this.#bytesPerSpan)
    for (const [resource, scopes] of groupByResourceAndScope(spans)) {
      writer.tag(1, 2)
      writeResourceSpans(writer, resource, scopes, this.#repeated)
    }
    // From the last batch only: one with a huge span must not make every later buffer huge.
    if (spans.length > 0) this.#bytesPerSpan = Math.ceil(SIZE_SLACK * writer.pos / spans.length)
    return writer.finish()
  }
}

/** Spans by resource, then by scope, both by identity and in the order first seen (as the SDK groups them). */
function groupByResourceAndScope (spans: ReadableSpan[]): Map<Resource, Map<Scope, ReadableSpan[]>> {
  const resources = new Map<Resource, Map<Scope, ReadableSpan[]>>()
  for (const span of spans) {
    let scopes = resources.get(span.resource)
    if (scopes === undefined) {
      scopes = new Map()
      resources.set(span.resource, scopes)
    }
    const list = scopes.get(span.instrumentationScope)
    if (list === undefined) scopes.set(span.instrumentationScope, [span])
    else list.push(span)
  }
  return resources
}

function writeResourceSpans (writer: ProtoWriter, resource: Resource, scopes: Map<Scope, ReadableSpan[]>, repeated: RepeatedAttributes): void {
  const start = writer.begin()
  writer.tag(1, 2)
  const resourceStart = writer.begin()
  if (resource.attributes) writeAttributes(writer, resource.attributes, 1)
  // dropped_attributes_count: the SDK writes 0 (a Resource does not count them).
  writer.tag(2, 0)
  writer.varint(0)
  writer.end(resourceStart)
  for (const [scope, spans] of scopes) {
    writer.tag(2, 2)
    writeScopeSpans(writer, scope, spans, repeated)
  }
  if (resource.schemaUrl) {
    writer.tag(3, 2)
    writer.string(resource.schemaUrl)
  }
  writer.end(start)
}

function writeScopeSpans (writer: ProtoWriter, scope: Scope, spans: ReadableSpan[], repeated: RepeatedAttributes): void {
  const start = writer.begin()
  writer.tag(1, 2)
  const scopeStart = writer.begin()
  writer.tag(1, 2)
  writer.string(scope.name)
  if (scope.version) {
    writer.tag(2, 2)
    writer.string(scope.version)
  }
  if (scope.attributes) writeAttributes(writer, scope.attributes, 3)
  if (scope.droppedAttributesCount) {
    writer.tag(4, 0)
    writer.varint(scope.droppedAttributesCount)
  }
  writer.end(scopeStart)
  for (const span of spans) {
    writer.tag(2, 2)
    writeSpan(writer, span, repeated)
  }
  if (scope.schemaUrl) {
    writer.tag(3, 2)
    writer.string(scope.schemaUrl)
  }
  writer.end(start)
}

function writeSpan (writer: ProtoWriter, span: ReadableSpan, repeated: RepeatedAttributes): void {
  const start = writer.begin()
  const context = span.spanContext()
  writeIds(writer, context)
  const parent = span.parentSpanContext
  if (parent?.spanId) {
    writer.tag(4, 2)
    writer.hexBytes(parent.spanId)
  }
  writer.tag(5, 2)
  writer.string(span.name)
  // OTLP's SpanKind has UNSPECIFIED at 0, the API's starts at INTERNAL = 0.
  const kind = span.kind == null ? 0 : span.kind + 1
  if (kind !== 0) {
    writer.tag(6, 0)
    writer.varint(kind)
  }
  writer.tag(7, 1)
  writeTime(writer, span.startTime)
  writer.tag(8, 1)
  writeTime(writer, span.endTime)
  if (span.attributes) writeSpanAttributes(writer, span.attributes, repeated)
  writer.tag(10, 0)
  writer.varint(span.droppedAttributesCount)
  for (const event of span.events) {
    writer.tag(11, 2)
    writeEvent(writer, event)
  }
  writer.tag(12, 0)
  writer.varint(span.droppedEventsCount)
  for (const link of span.links) {
    writer.tag(13, 2)
    writeLink(writer, link)
  }
  writer.tag(14, 0)
  writer.varint(span.droppedLinksCount)
  writer.tag(15, 2)
  const statusStart = writer.begin()
  if (span.status.message) {
    writer.tag(2, 2)
    writer.string(span.status.message)
  }
  writer.tag(3, 0)
  writer.varint(span.status.code)
  writer.end(statusStart)
  writer.tag(16, 5)
  writer.fixed32(spanFlags(context, parent?.isRemote))
  writer.end(start)
}

function writeEvent (writer: ProtoWriter, event: TimedEvent): void {
  const start = writer.begin()
  writer.tag(1, 1)
  writeTime(writer, event.time)
  writer.tag(2, 2)
  writer.string(event.name)
  if (event.attributes) writeAttributes(writer, event.attributes, 3)
  writer.tag(4, 0)
  writer.varint(event.droppedAttributesCount || 0)
  writer.end(start)
}

function writeLink (writer: ProtoWriter, link: Link): void {
  const start = writer.begin()
  const context = link.context
  writeIds(writer, context)
  if (link.attributes) writeAttributes(writer, link.attributes, 4)
  writer.tag(5, 0)
  writer.varint(link.droppedAttributesCount || 0)
  writer.tag(6, 5)
  writer.fixed32(spanFlags(context, context.isRemote))
  writer.end(start)
}

/** Fields 1–3 of a Span and of a Span.Link alike: trace id, span id, and the trace state when there is one. */
function writeIds (writer: ProtoWriter, context: SpanContext): void {
  writer.tag(1, 2)
  writer.hexBytes(context.traceId)
  writer.tag(2, 2)
  writer.hexBytes(context.spanId)
  const traceState = context.traceState?.serialize()
  if (traceState) {
    writer.tag(3, 2)
    writer.string(traceState)
  }
}

/** OTLP's span flags: the W3C trace flags, and whether the parent (or linked) context is remote, which the SDK always states. */
function spanFlags (context: SpanContext, isRemote: boolean | undefined): number {
  return (context.traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0)
}

/**
 * An HrTime as nanoseconds in a fixed64, exact beyond 2^53 ns (any date after 1970-04): the seconds are split at
 * 16 bits so each product with 1e9 stays an exact double, as the SDK's `writeHrTimeAsFixed64` splits them.
 */
function writeTime (writer: ProtoWriter, time: HrTime): void {
  const seconds = time[0]
  const fromLow16 = (seconds & 0xffff) * 1e9
  const fromHigh = ((seconds / 0x10000) >>> 0) * 1e9
  const low = (fromLow16 >>> 0) + (((fromHigh & 0xffff) * 0x10000) >>> 0) + time[1]
  const high = Math.floor(fromLow16 / 0x100000000) + ((fromHigh / 0x10000) >>> 0) + Math.floor(low / 0x100000000)
  writer.fixed64(low >>> 0, high >>> 0)
}

/** Repeated KeyValue: own enumerable keys in for-in order, as the SDK walks them. */
function writeAttributes (writer: ProtoWriter, attributes: Attributes, field: number): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue
    writer.tag(field, 2)
    writeKeyValue(writer, key, attributes[key])
  }
}

/** A span's attributes (field 9), those with the value the span before had copied from its bytes. */
function writeSpanAttributes (writer: ProtoWriter, attributes: Attributes, repeated: RepeatedAttributes): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue
    const value = attributes[key]
    if (typeof value === 'object' || value === undefined) {
      writer.byte(0x4a)
      writeKeyValue(writer, key, value)
    } else if (!repeated.copied(writer, key, value)) {
      const start = writer.pos
      writer.byte(0x4a)
      writeKeyValue(writer, key, value)
      repeated.written(writer, start)
    }
  }
}

function writeKeyValue (writer: ProtoWriter, key: string, value: unknown): void {
  const start = writer.begin()
  writer.tag(1, 2)
  writer.string(key)
  writer.tag(2, 2)
  const valueStart = writer.begin()
  writeAnyValue(writer, value)
  writer.end(valueStart)
  writer.end(start)
}

/**
 * An AnyValue's one field: integers within int64 as int_value (beyond 2^53 too), other numbers as double_value;
 * arrays, byte arrays and plain objects (kvlist) as the SDK writes them; anything else (undefined, null) as
 * nothing, leaving an empty AnyValue.
 */
function writeAnyValue (writer: ProtoWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      writer.tag(1, 2)
      writer.string(value)
      return
    case 'boolean':
      writer.tag(2, 0)
      writer.varint(value ? 1 : 0)
      return
    case 'number':
      if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_MAX_EXCLUSIVE) {
        writer.tag(3, 0)
        writer.varint(value)
      } else {
        writer.tag(4, 1)
        writer.double(value)
      }
      return
    case 'object':
      if (value === null) return
      if (value instanceof Uint8Array) {
        writer.tag(7, 2)
        writer.bytes(value)
      } else if (Array.isArray(value)) {
        writer.tag(5, 2)
        const start = writer.begin()
        for (const item of value as AttributeValue[]) {
          writer.tag(1, 2)
          const itemStart = writer.begin()
          writeAnyValue(writer, item)
          writer.end(itemStart)
        }
        writer.end(start)
      } else {
        writer.tag(6, 2)
        const start = writer.begin()
        const entries = value as Record<string, unknown>
        for (const key in entries) {
          if (!Object.prototype.hasOwnProperty.call(entries, key)) continue
          writer.tag(1, 2)
          writeKeyValue(writer, key, entries[key])
        }
        writer.end(start)
      }
  }
}
