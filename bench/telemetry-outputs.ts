import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { askSinkCounts } from './otlp-sink-counts.js'
import type { RunLog } from './run-scenario.js'
import type { ScenarioResult, TelemetryOutputCheck } from './result-types.js'
import { ACCESS_FILE_SUFFIX, TRACE_ALL_SUFFIX, TRACE_NONE_SUFFIX, type TelemetryOutputs } from './telemetry-variants.js'

/**
 * `--telemetry`, after the rounds: did the trace variant's spans reach the sink and the access-file variant's lines
 * reach its file? A variant that silently put out nothing would have measured nothing, so each must show at least
 * one span (one line) per request measured on it; the gateway sampling no trace must have exported no span.
 */

/** Requests measured on variant `name`: the rounds' responses, or the counted batches' requests; undefined if it has none. */
export function measuredRequests (result: ScenarioResult, name: string): number | undefined {
  const counted = result.instructions?.variants.find((v) => v.name === name)
  if (counted !== undefined) return counted.batches.reduce((sum, b) => sum + b.requests, 0)
  return result.variants.find((v) => v.name === name)?.requests
}

/** Lines of an access log: how many, and how many of them are not a JSON object with a numeric `status`. */
export function accessLines (text: string): { lines: number, malformed: number } {
  let lines = 0
  let malformed = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    lines++
    try {
      const parsed = JSON.parse(line) as { status?: unknown }
      if (typeof parsed.status !== 'number') malformed++
    } catch {
      malformed++
    }
  }
  return { lines, malformed }
}

/** What is wrong with a scenario's telemetry output, one message per variant at fault (none: all good). */
export function telemetryProblems (subject: string, check: TelemetryOutputCheck, unreadableExports = 0): string[] {
  const problems: string[] = []
  const expectedSpans = check.tracedRequests * check.spansPerRequest
  if (check.tracedSpans < expectedSpans || check.tracedSpans === 0) {
    problems.push(`${subject}${TRACE_ALL_SUFFIX}: the OTLP sink received ${check.tracedSpans} spans in ${check.tracedExports} exports for ${check.tracedRequests} measured requests (at least ${expectedSpans} expected: spans were dropped or never exported)`)
  }
  if (unreadableExports > 0) problems.push(`${subject}${TRACE_ALL_SUFFIX}: ${unreadableExports} exports were not OTLP protobuf the sink could read`)
  if (check.untracedSpans > 0) problems.push(`${subject}${TRACE_NONE_SUFFIX}: sample_ratio 0, yet the sink received ${check.untracedSpans} spans`)
  if (check.accessLines < check.accessRequests || check.accessLines === 0) {
    problems.push(`${subject}${ACCESS_FILE_SUFFIX}: the access log holds ${check.accessLines} lines for ${check.accessRequests} measured requests`)
  }
  return problems
}

/** How long the outputs get to arrive: spans are exported at least every second, the file written in batches. */
const PATIENCE_MS = 5_000
/** Under callgrind a gateway runs tens of times slower, its exporter and file sink too. */
const PATIENCE_UNDER_CALLGRIND_MS = 60_000

/**
 * Waits (up to the patience) until the sink and the file hold what the measured requests should have put out,
 * then checks them: every problem fails the run through `log`. Returns the figures for the results.
 */
export async function checkTelemetryOutputs (outputs: TelemetryOutputs, result: ScenarioResult, log: RunLog): Promise<TelemetryOutputCheck> {
  const { subject } = outputs
  const tracedRequests = measuredRequests(result, subject + TRACE_ALL_SUFFIX) ?? 0
  const accessRequests = measuredRequests(result, subject + ACCESS_FILE_SUFFIX) ?? 0
  const deadline = Date.now() + (result.kind === 'instructions' ? PATIENCE_UNDER_CALLGRIND_MS : PATIENCE_MS)
  for (;;) {
    const counts = await askSinkCounts(outputs.sinkUrl)
    const traced = counts['trace-100']
    const text = await readFile(outputs.accessLogFile, 'utf8').catch(() => '')
    const lines = accessLines(text)
    const check: TelemetryOutputCheck = {
      tracedSpans: traced?.spans ?? 0,
      tracedExports: traced?.exports ?? 0,
      tracedRequests,
      spansPerRequest: outputs.spansPerRequest,
      untracedSpans: counts['trace-0']?.spans ?? 0,
      accessLines: lines.lines - lines.malformed,
      accessRequests,
    }
    const problems = telemetryProblems(subject, check, traced?.unreadable ?? 0)
    if (lines.malformed > 0) problems.push(`${subject}${ACCESS_FILE_SUFFIX}: ${lines.malformed} lines of the access log are not JSON with a status`)
    if (problems.length === 0 || Date.now() >= deadline) {
      for (const problem of problems) log.fail(`${result.id} / ${problem}`)
      log.progress(`[${result.id}] telemetry output: ${check.tracedSpans} spans in ${check.tracedExports} exports for ${tracedRequests} measured requests × ${outputs.spansPerRequest}; ${check.untracedSpans} spans at sampling 0; ${check.accessLines} access lines for ${accessRequests} measured requests`)
      return check
    }
    await sleep(250)
  }
}
