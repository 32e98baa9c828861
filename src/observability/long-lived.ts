/**
 * Answers that stay open by design — an event stream, a WebSocket, a fan-out preview or commit waiting on every
 * store's lane — are timed apart from request latency (`lanegate_http_stream_duration_seconds`): a stream open for
 * minutes is not a slow API call, and would make p99 read minutes while API calls take a millisecond. The place
 * that knows an answer is one marks its raw response once; every other request pays one property read.
 */
const LONG_LIVED = Symbol('lanegate.longLived')

interface Markable { [LONG_LIVED]?: true }

/** Marks the raw response (`reply.raw`) of an answer that stays open by design. */
export function markLongLived (res: object): void {
  (res as Markable)[LONG_LIVED] = true
}

/** Whether `markLongLived` marked this raw response. */
export function isLongLived (res: object): boolean {
  return (res as Markable)[LONG_LIVED] === true
}
