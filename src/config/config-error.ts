import { counted } from '../errors/counted.js'

/** One problem found in gateway.yaml, located by YAML path (and line, when the parser knows it). */
export interface ConfigProblem {
  /** Dotted path with [index] for list items, e.g. `services.payments.routes.create_intent[0].scope`. */
  path: string
  line?: number
  message: string
}

/** Thrown when gateway.yaml cannot be used; lists every problem found, not only the first. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[]
  readonly file: string

  constructor (file: string, problems: ConfigProblem[]) {
    super(`${file}: ${counted(problems.length, 'configuration error')}\n${problems.map((p) => `  ${formatProblem(file, p)}`).join('\n')}`)
    this.name = 'ConfigError'
    this.file = file
    this.problems = problems
  }
}

export function formatProblem (file: string, problem: ConfigProblem): string {
  const where = problem.line === undefined ? file : `${file}:${problem.line}`
  return `${where} ${problem.path || '(root)'}: ${problem.message}`
}

/** Renders a path array (`['services', 'payments', 'routes', 'x', 0]`) the way problems show it. */
export function formatPath (segments: readonly (string | number)[]): string {
  let out = ''
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`
    else out += out === '' ? s : `.${s}`
  }
  return out
}

/** Reports a problem at a YAML path (segments below the file's root): every check of the second pass takes one. */
export type Report = (segments: (string | number)[], message: string) => void
