import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import type { LoadJob, LoadResult, WorkerReply, WorkerRequest } from './load-job.js'
import type { TimedSample } from './gc-tail.js'
import { runHandshakeJob } from './handshake-load.js'
import { pidCpuMicros, treeCpuMicros } from './proc-stat.js'
import { monotonicMs } from './mono-clock.js'
import { SampleBuffer, latencySummary } from './stats.js'

/**
 * The load generator: a separate process (pinned to its own core by the harness) that runs autocannon as a
 * library for each job it is sent over IPC and answers with a LoadResult. Keeping it out of the orchestrator
 * means the orchestrator's bookkeeping never competes with the generator, and its CPU share can be measured.
 */

function requestsFor (job: LoadJob): autocannon.Request[] | undefined {
  if (job.tokensFile === undefined) return undefined
  const tokens = readFileSync(job.tokensFile, 'utf8').split('\n').filter((line) => line !== '')
  if (tokens.length === 0) throw new Error(`no tokens in ${job.tokensFile}`)
  const path = new URL(job.url).pathname + new URL(job.url).search
  let next = 0
  return [{
    method: job.method,
    path,
    setupRequest: function nextToken (request) {
      request.headers = { ...job.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` }
      return request
    },
  }]
}

/** The samples of `latencies` slower than `threshold`, each with its start and end (`ends[i]` − its latency). */
function slowerThan (threshold: number, latencies: Float64Array, ends: Float64Array): TimedSample[] {
  const tail: TimedSample[] = []
  for (let i = 0; i < latencies.length; i++) {
    if (latencies[i] > threshold) tail.push({ startMs: ends[i] - latencies[i], endMs: ends[i] })
  }
  return tail
}

/** Runs one job to completion. */
export function runJob (job: LoadJob): Promise<LoadResult> {
  // A new TLS connection per request: measured by handshake-load.ts (autocannon's reconnectRate drops responses).
  if (job.reconnectRate === 1 && job.url.startsWith('https:')) return runHandshakeJob(job)
  return new Promise((resolve, reject) => {
    const samples = new SampleBuffer()
    // timeTail: when each response ended, on the clock the servers' GC preloads use (autocannon's responseTime is
    // measured up to the moment it emits 'response', so the request started that many ms before).
    const ends = job.timeTail === true ? new SampleBuffer() : undefined
    const statusCounts: Record<string, number> = {}
    let firstError: string | undefined
    let errorCount = 0
    let timeoutCount = 0
    const requests = requestsFor(job)
    const cpuBefore = process.cpuUsage()
    const serverBefore = treeCpuMicros(job.serverPid)
    const rootBefore = pidCpuMicros(job.serverPid)
    const upstreamBefore = job.upstreamPid === undefined ? 0 : treeCpuMicros(job.upstreamPid)
    const started = performance.now()
    const fromMs = monotonicMs()
    const instance = autocannon({
      url: job.url,
      method: job.method,
      headers: job.headers,
      body: job.body,
      connections: job.connections,
      ...(job.amount === undefined ? { duration: job.duration } : { amount: job.amount }),
      timeout: job.timeoutSeconds ?? 10,
      ...(requests === undefined ? {} : { requests }),
    }, function done (error) {
      const wall = (performance.now() - started) / 1000
      const toMs = monotonicMs()
      const serverCpuMicros = treeCpuMicros(job.serverPid) - serverBefore
      const serverRootCpuMicros = pidCpuMicros(job.serverPid) - rootBefore
      const upstreamCpuMicros = job.upstreamPid === undefined ? undefined : treeCpuMicros(job.upstreamPid) - upstreamBefore
      const cpu = process.cpuUsage(cpuBefore)
      if (error !== null && error !== undefined) {
        reject(error)
        return
      }
      const latencyMs = latencySummary(samples.values())
      resolve({
        requests: samples.length,
        durationSeconds: wall,
        rps: samples.length / wall,
        statusCounts,
        errors: errorCount,
        timeouts: timeoutCount,
        ...(firstError === undefined ? {} : { firstError }),
        latencyMs,
        serverCpuMicros,
        serverRootCpuMicros,
        ...(upstreamCpuMicros === undefined ? {} : { upstreamCpuMicros }),
        loadgenCpu: (cpu.user + cpu.system) / 1e6 / wall,
        ...(ends === undefined ? {} : { window: { fromMs, toMs }, tail: slowerThan(latencyMs.p99, samples.values(), ends.values()) }),
      })
    })
    instance.on('response', function onResponse (_client, statusCode, _bytes, responseTime) {
      samples.push(responseTime)
      ends?.push(monotonicMs())
      statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1
    })
    instance.on('reqError', function onError (error: Error) {
      errorCount++
      if (error.message === 'request timed out') timeoutCount++
      firstError ??= error.message
    })
  })
}

function reply (message: WorkerReply): void {
  process.send?.(message)
}

if (process.send !== undefined) {
  process.on('message', function onJob (message: WorkerRequest) {
    if (message.type !== 'run') return
    runJob(message.job).then(
      (result) => reply({ type: 'result', id: message.id, result }),
      (error: unknown) => reply({ type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) }),
    )
  })
  process.on('disconnect', () => process.exit(0))
}
