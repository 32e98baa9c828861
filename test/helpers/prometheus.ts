import { createRequire } from 'node:module'

/** One metric family as parse-prometheus-text-format returns it (prom2json's shape). */
export interface ParsedFamily {
  name: string
  help: string
  type: string
  metrics: { value?: string, labels?: Record<string, string>, buckets?: Record<string, string>, count?: string, sum?: string }[]
}

// The package ships no types; it is a single CommonJS function.
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => ParsedFamily[]

/** Scrapes `<admin>/metrics` and parses it with a real Prometheus text-format parser. */
export async function scrape (admin: string): Promise<ParsedFamily[]> {
  return parse(await scrapeText(admin))
}

/** The raw exposition text of `<admin>/metrics`. */
export async function scrapeText (admin: string): Promise<string> {
  const res = await fetch(`${admin}/metrics`)
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`)
  return res.text()
}

/**
 * The `_count` of one labelled histogram series, read from the text: parse-prometheus-text-format 1.1 drops the
 * labels, sum and count of labelled histograms (it keeps only the merged buckets), so counters are checked
 * through the parser and histogram counts here.
 */
export function histogramCount (text: string, name: string, labels: Record<string, string>): number {
  const rendered = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')
  const line = text.split('\n').find((l) => l.startsWith(`${name}_count{${rendered}} `))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

/** The value of one series (labels matched exactly), 0 when the series does not exist yet. */
export function sample (families: ParsedFamily[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name)
  const wanted = JSON.stringify(Object.entries(labels).sort())
  const series = family?.metrics.find((m) => JSON.stringify(Object.entries(m.labels ?? {}).sort()) === wanted)
  if (series === undefined) return 0
  return Number(series.value ?? series.count)
}
