import type { JsonBodyChanges, NameChanges, TransformOptions } from './schema.js'

/**
 * Each change the options make, one line each (the console lists them under a route's chain, where the chain shows
 * only `describe`'s one-line summary), in the order they apply: the request's parts, the answer's, the SOAP call.
 */
export function changeLines (options: TransformOptions): string[] {
  const lines: string[] = []
  for (const side of ['request', 'response'] as const) {
    const parts = options[side]
    if (parts === undefined) continue
    if (parts.headers !== undefined) lines.push(...partLines(`${side} headers`, parts.headers))
    if ('query' in parts && parts.query !== undefined) lines.push(...partLines(`${side} query`, parts.query))
    if (parts.body !== undefined) lines.push(...partLines(`${side} body`, parts.body))
  }
  const soap = options.soap
  if (soap !== undefined) lines.push(`SOAP ${soap.version} ${soap.operation} (${soap.namespace})${soap.action === undefined ? '' : `, action ${soap.action}`}`)
  return lines
}

function partLines (what: string, changes: NameChanges | JsonBodyChanges): string[] {
  const lines: string[] = []
  if ('from' in changes && changes.from !== undefined) lines.push(`${what}: read as ${changes.from}`)
  for (const [from, to] of Object.entries(changes.rename ?? {})) lines.push(`${what}: rename ${from} → ${to}`)
  if (changes.remove !== undefined) lines.push(`${what}: remove ${changes.remove.join(', ')}`)
  for (const [name, value] of Object.entries(changes.set ?? {})) lines.push(`${what}: set ${name} = ${typeof value === 'string' ? value : JSON.stringify(value)}`)
  if ('map' in changes && changes.map !== undefined) lines.push(`${what}: map ${changes.map}`)
  if ('to' in changes && changes.to !== undefined) lines.push(`${what}: written as ${changes.to}`)
  return lines
}
