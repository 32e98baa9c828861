import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { REPO_ROOT } from './paths.js'

/** The parts of a V8 .cpuprofile this reads. */
interface CpuProfile {
  nodes: Array<{ id: number, callFrame: { functionName: string, url: string, lineNumber: number }, hitCount?: number }>
  startTime: number
  endTime: number
  samples?: number[]
}

/** Self time of one function or one file, as a share of all samples. */
export interface HotSpot {
  where: string
  share: number
}

function location (url: string): string {
  if (url === '') return '(native / V8)'
  let path = url
  if (url.startsWith('file://')) path = fileURLToPath(url)
  if (path.startsWith(REPO_ROOT)) path = path.slice(REPO_ROOT.length)
  return path.replace(/^node_modules\/(\.pnpm\/)?/, 'npm:')
}

/**
 * Self-time shares by function and by file from one profile, highest first. Shares are of the busy samples:
 * `(idle)` (the process waiting, e.g. while another variant was measured) is left out and reported as `idle`.
 */
export function hotSpots (profile: CpuProfile, top = 25): { functions: HotSpot[], files: HotSpot[], idle: number } {
  const isIdle = (node: CpuProfile['nodes'][number]): boolean => node.callFrame.functionName === '(idle)'
  const all = profile.nodes.reduce((n, node) => n + (node.hitCount ?? 0), 0) || 1
  const idleHits = profile.nodes.filter(isIdle).reduce((n, node) => n + (node.hitCount ?? 0), 0)
  const total = all - idleHits || 1
  const byFunction = new Map<string, number>()
  const byFile = new Map<string, number>()
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0
    if (hits === 0 || isIdle(node)) continue
    const file = location(node.callFrame.url)
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${file}${node.callFrame.url === '' ? '' : `:${node.callFrame.lineNumber + 1}`}`
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits)
    byFile.set(file, (byFile.get(file) ?? 0) + hits)
  }
  const ranked = (map: Map<string, number>): HotSpot[] => [...map.entries()]
    .sort((a, b) => b[1] - a[1]).slice(0, top).map(([where, hits]) => ({ where, share: hits / total }))
  return { functions: ranked(byFunction), files: ranked(byFile), idle: idleHits / all }
}

/** A text summary of every .cpuprofile in `dir` (one per gateway process the run started). */
export function summarizeProfiles (dir: string): string {
  const lines: string[] = []
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile
    const spots = hotSpots(profile)
    lines.push(`== ${join(dir, file)} (${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, ${(spots.idle * 100).toFixed(0)}% idle; shares below are of busy time)`, '-- self time by file:')
    for (const s of spots.files) lines.push(`${(s.share * 100).toFixed(1).padStart(5)}%  ${s.where}`)
    lines.push('-- self time by function:')
    for (const s of spots.functions) lines.push(`${(s.share * 100).toFixed(1).padStart(5)}%  ${s.where}`)
    lines.push('')
  }
  return lines.join('\n')
}
