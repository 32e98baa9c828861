import { request } from 'node:https'
import { performance } from 'node:perf_hooks'
import type { LoadJob, LoadResult } from './load-job.js'
import { treeCpuMicros } from './proc-stat.js'
import { SampleBuffer, latencySummary } from './stats.js'

/**
 * The load of a `reconnectRate: 1` job over https: every request on a new TLS connection (a full handshake: no
 * agent, no session reused), `connections` of them in flight, for `duration` seconds. autocannon cannot do this
 * (its reconnectRate drops the response that triggers the reconnect, so every response at rate 1), so the
 * handshake variants of the `tls` scenario, lanegate's and nginx's alike, are measured here the same way.
 */
export async function runHandshakeJob (job: LoadJob): Promise<LoadResult> {
  const samples = new SampleBuffer()
  const statusCounts: Record<string, number> = {}
  let errors = 0
  let firstError: string | undefined
  const cpuBefore = process.cpuUsage()
  const serverBefore = treeCpuMicros(job.serverPid)
  const upstreamBefore = job.upstreamPid === undefined ? 0 : treeCpuMicros(job.upstreamPid)
  const started = performance.now()
  const ends = started + job.duration * 1000
  let sent = 0

  function once (): Promise<void> {
    return new Promise((resolve) => {
      const t0 = performance.now()
      const req = request(job.url, { method: job.method, headers: { ...job.headers, connection: 'close' }, agent: false, rejectUnauthorized: false, timeout: (job.timeoutSeconds ?? 10) * 1000 }, (res) => {
        res.resume()
        res.on('end', () => {
          samples.push(performance.now() - t0)
          statusCounts[res.statusCode ?? 0] = (statusCounts[res.statusCode ?? 0] ?? 0) + 1
          resolve()
        })
      })
      req.on('timeout', () => req.destroy(new Error('request timed out')))
      req.on('error', (error) => {
        errors++
        firstError ??= error.message
        resolve()
      })
      req.end(job.body)
    })
  }

  async function connection (): Promise<void> {
    while (performance.now() < ends && (job.amount === undefined || sent < job.amount)) {
      sent++
      await once()
    }
  }
  await Promise.all(Array.from({ length: job.connections }, connection))
  const wall = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  return {
    requests: samples.length,
    durationSeconds: wall,
    rps: samples.length / wall,
    statusCounts,
    errors,
    timeouts: 0,
    ...(firstError === undefined ? {} : { firstError }),
    latencyMs: latencySummary(samples.values()),
    serverCpuMicros: treeCpuMicros(job.serverPid) - serverBefore,
    ...(job.upstreamPid === undefined ? {} : { upstreamCpuMicros: treeCpuMicros(job.upstreamPid) - upstreamBefore }),
    loadgenCpu: (cpu.user + cpu.system) / 1e6 / wall,
  }
}
