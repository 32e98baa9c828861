import type { Mapping } from './mapping.js'

/**
 * Plain mappings evaluated without JSONata's evaluator: an expression made only of object constructors with
 * literal keys, paths of field names (from the input, `$`, `$$` or a binding such as `$params`), string, number,
 * `true`/`false`/`null` literals and `$number(…)` is turned, once, from the AST JSONata parsed into a plain
 * function. JSONata evaluates every step asynchronously (a promise each); this answers in one synchronous call.
 *
 * It gives JSONata's result, or `OUTSIDE` where its subset ends, at build time (another kind of expression:
 * `plainMapping` answers undefined) or at run time (an array met on a path, an input that is not an object, a
 * `$number` JSONata would refuse or read as hex), and JSONata evaluates the expression as before: so every error
 * and its message stay JSONata's. test/unit/transform-plain-mapping.test.ts compares the two on generated inputs.
 */

/** What a plain mapping answers where its subset ends: JSONata evaluates the expression instead. */
export const OUTSIDE: unique symbol = Symbol('outside plain mappings')

export type PlainMapping = (input: unknown, bindings: Readonly<Record<string, unknown>>) => unknown

type Evaluate = (input: unknown, bindings: Readonly<Record<string, unknown>>) => unknown

/** The plain function of a compiled mapping, or undefined when its expression is not a plain one. */
export function plainMapping (mapping: Mapping): PlainMapping | undefined {
  const evaluate = compile(mapping.ast())
  if (evaluate === undefined) return undefined
  return function evaluatePlainMapping (input, bindings) {
    if (!isObject(input)) return OUTSIDE
    try {
      return evaluate(input, bindings)
    } catch (error) {
      if (error === OUTSIDE) return OUTSIDE
      throw error
    }
  }
}

type Node = Record<string, unknown>

function compile (node: unknown): Evaluate | undefined {
  if (!isObject(node)) return undefined
  switch (node.type) {
    case 'string':
    case 'number':
    case 'value':
      return onlyKeys(node, ['type', 'value', 'position']) ? literal(node.value) : undefined
    case 'unary':
      return node.value === '{' && onlyKeys(node, ['type', 'value', 'position', 'lhs']) ? objectOf(node.lhs) : undefined
    case 'path':
      return onlyKeys(node, ['type', 'steps']) ? pathOf(node.steps) : undefined
    case 'variable':
      return onlyKeys(node, ['type', 'value', 'position']) ? pathOf([node]) : undefined
    case 'function':
      return numberOf(node)
    default:
      return undefined
  }
}

function literal (value: unknown): Evaluate | undefined {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean' && value !== null) return undefined
  return () => value
}

/**
 * `{ "key": value, … }`: keys literal and distinct (JSONata refuses a repeated key, and its own two flag names); an
 * undefined value leaves its key out. The object has no prototype, as JSONata's.
 */
function objectOf (pairs: unknown): Evaluate | undefined {
  if (!Array.isArray(pairs)) return undefined
  const keys: string[] = []
  const values: Evaluate[] = []
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) return undefined
    const [key, value] = pair as [unknown, unknown]
    if (!isObject(key) || key.type !== 'string' || typeof key.value !== 'string' || !onlyKeys(key, ['type', 'value', 'position'])) return undefined
    const evaluate = compile(value)
    if (evaluate === undefined || keys.includes(key.value) || key.value === '_jsonata_lambda' || key.value === '_jsonata_function') return undefined
    keys.push(key.value)
    values.push(evaluate)
  }
  return function constructObject (input, bindings) {
    const out: Record<string, unknown> = Object.create(null)
    for (let i = 0; i < keys.length; i++) {
      const value = (values[i] as Evaluate)(input, bindings)
      if (value !== undefined) out[keys[i] as string] = value
    }
    return out
  }
}

/** `name.name…`, or `$var.name…`: each step an own field of an object; an array on the way is JSONata's to map. */
function pathOf (steps: unknown): Evaluate | undefined {
  if (!Array.isArray(steps) || steps.length === 0) return undefined
  const names: string[] = []
  let start: ((input: unknown, bindings: Readonly<Record<string, unknown>>) => unknown) | undefined
  for (const [i, step] of steps.entries()) {
    if (!isObject(step) || typeof step.value !== 'string' || !onlyKeys(step, ['type', 'value', 'position'])) return undefined
    if (step.type === 'name') names.push(step.value)
    else if (step.type === 'variable' && i === 0) start = variable(step.value)
    else return undefined
  }
  const from = start ?? ((input: unknown) => input)
  return function followPath (input, bindings) {
    let current = from(input, bindings)
    for (const name of names) {
      if (Array.isArray(current)) throw OUTSIDE
      current = isObject(current) && Object.hasOwn(current, name) ? current[name] : undefined
      if (current === undefined) return undefined
    }
    if (Array.isArray(current)) throw OUTSIDE
    return current
  }
}

/** `$` (the input), `$$` (the root: the input too, at the top of a plain mapping), or a binding by name. */
function variable (name: string): (input: unknown, bindings: Readonly<Record<string, unknown>>) => unknown {
  if (name === '' || name === '$') return (input) => input
  return function binding (_input, bindings) {
    // Not bound here: JSONata would look further (its own functions are variables too).
    if (!Object.hasOwn(bindings, name)) throw OUTSIDE
    return bindings[name]
  }
}

const DECIMAL = /^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$/

/** `$number(x)`: a number as it is, a decimal string read, a boolean 1 or 0, nothing as nothing; else JSONata's. */
function numberOf (node: Node): Evaluate | undefined {
  const procedure = node.procedure
  if (!onlyKeys(node, ['type', 'name', 'value', 'position', 'arguments', 'procedure']) || node.name !== undefined || node.value !== '(') return undefined
  if (!isObject(procedure) || procedure.type !== 'variable' || procedure.value !== 'number') return undefined
  if (!Array.isArray(node.arguments) || node.arguments.length !== 1) return undefined
  const argument = compile(node.arguments[0])
  if (argument === undefined) return undefined
  return function toNumber (input, bindings) {
    // A binding named `number` would stand for JSONata's function.
    if (Object.hasOwn(bindings, 'number')) throw OUTSIDE
    const value = argument(input, bindings)
    if (value === undefined) return undefined
    if (typeof value === 'number') return value
    if (typeof value === 'boolean') return value ? 1 : 0
    if (typeof value === 'string' && DECIMAL.test(value)) {
      const number = Number.parseFloat(value)
      if (Number.isFinite(number)) return number
    }
    throw OUTSIDE
  }
}

function isObject (value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Whether the node has no own key but these (JSONata's parser nodes inherit its token fields: not asked). */
function onlyKeys (node: Node, allowed: readonly string[]): boolean {
  return Object.keys(node).every((key) => allowed.includes(key))
}
