/**
 * How many spans an OTLP/HTTP protobuf export request holds, read from its wire format without decoding it:
 * ExportTraceServiceRequest.resource_spans (field 1) → ResourceSpans.scope_spans (field 2) → ScopeSpans.spans
 * (field 2), each a length-delimited field; everything else is skipped by its wire type. The bench's OTLP sink
 * counts with it, so the check after a run can hold what arrived against the requests that were answered.
 */

/** The wire types of protobuf (varint, 64-bit, length-delimited, 32-bit); groups (3, 4) are not used by OTLP. */
const VARINT = 0
const FIXED64 = 1
const LENGTH_DELIMITED = 2
const FIXED32 = 5

interface Field { number: number, start: number, end: number }

/** A varint at `at`: its value and where the next byte is. Values past 2^53 are not needed here (lengths, tags). */
function varint (bytes: Uint8Array, at: number): { value: number, next: number } {
  let value = 0
  let scale = 1
  for (let i = at; i < bytes.length; i++) {
    const byte = bytes[i] as number
    value += (byte & 0x7f) * scale
    if (byte < 0x80) return { value, next: i + 1 }
    scale *= 128
  }
  throw new Error('truncated varint')
}

/** The length-delimited fields of the message in `bytes[start, end)`, others skipped. */
function * lengthDelimited (bytes: Uint8Array, start: number, end: number): Generator<Field> {
  let at = start
  while (at < end) {
    const tag = varint(bytes, at)
    const wireType = tag.value % 8
    const number = Math.floor(tag.value / 8)
    at = tag.next
    if (wireType === VARINT) at = varint(bytes, at).next
    else if (wireType === FIXED64) at += 8
    else if (wireType === FIXED32) at += 4
    else if (wireType === LENGTH_DELIMITED) {
      const length = varint(bytes, at)
      const fieldEnd = length.next + length.value
      if (fieldEnd > end) throw new Error('a field runs past its message')
      yield { number, start: length.next, end: fieldEnd }
      at = fieldEnd
    } else throw new Error(`wire type ${wireType} is not used by OTLP`)
  }
  if (at !== end) throw new Error('a field runs past its message')
}

/** Spans in one ExportTraceServiceRequest (protobuf); throws when the bytes are not one. */
export function countOtlpSpans (bytes: Uint8Array): number {
  let spans = 0
  for (const resource of lengthDelimited(bytes, 0, bytes.length)) {
    if (resource.number !== 1) continue
    for (const scope of lengthDelimited(bytes, resource.start, resource.end)) {
      if (scope.number !== 2) continue
      for (const span of lengthDelimited(bytes, scope.start, scope.end)) if (span.number === 2) spans++
    }
  }
  return spans
}
