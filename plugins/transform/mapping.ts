import jsonata from 'jsonata'
import type { FastifyRequest } from 'fastify'
import type { Principal } from '../../src/plugin/index.js'

/**
 * Whole-body mappings in JSONata (https://jsonata.org): a maintained, documented query-and-transform language for
 * JSON, pure JavaScript with no dependencies (jsonata 2.x runs on Node >= 8), so operators write a reshaping in
 * gateway.yaml rather than a service. An expression is compiled once when the route's chain is built; a syntax
 * error is a config problem at load with its position.
 */

/** Why a mapping failed: JSONata's message and where in the expression; `timedOut` past the route's time limit. */
export class MappingError extends Error {
  constructor (message: string, readonly position: number | undefined, readonly timedOut = false) {
    super(message)
  }
}

/** JSONata's code for an evaluation that ran past its `timeout`. */
const TIMED_OUT = 'D1012'

/** A compiled expression. */
export type Mapping = ReturnType<typeof jsonata>

/** The syntax problem of `expression`, or undefined when it compiles. */
export function mappingProblem (expression: string): string | undefined {
  try {
    jsonata(expression)
    return undefined
  } catch (error) {
    return describe(error)
  }
}

/**
 * Compiles `expression` with a time limit: JSONata checks the clock as it enters each step of the expression and
 * stops an evaluation running longer than `timeoutMs` (a user's expression is code: a runaway recursion must not
 * hold the process). A single built-in call (one regular expression match) is not interrupted.
 */
export function compileMapping (expression: string, timeoutMs: number): Mapping {
  return jsonata(expression, { timeout: timeoutMs })
}

/** What an expression may read besides the body: `$principal`, `$params`, `$query` and, for an answer, `$status`. */
export function bindingsOf (request: FastifyRequest, principal: Principal | undefined, status?: number): Record<string, unknown> {
  return {
    principal: principal === undefined ? null : principalView(principal),
    params: request.params ?? {},
    query: request.query ?? {},
    ...(status === undefined ? {} : { status }),
  }
}

/** The principal as JSON (snake_case, as gateway.yaml and the tokens spell its fields). */
export function principalView (principal: Principal): Record<string, unknown> {
  return {
    subject: principal.subject,
    client_id: principal.clientId,
    organization_id: principal.organizationId,
    token_type: principal.tokenType,
    scopes: [...principal.scopes],
  }
}

/**
 * Evaluates a mapping; rejects with a MappingError when JSONata fails or gives no value (an expression that
 * matched nothing gives `undefined`, which is no body).
 */
export async function runMapping (mapping: Mapping, input: unknown, bindings: Record<string, unknown>): Promise<unknown> {
  let result: unknown
  try {
    result = await mapping.evaluate(input, bindings)
  } catch (error) {
    const { position, code } = error as { position?: number, code?: string }
    throw new MappingError(describe(error), position, code === TIMED_OUT)
  }
  if (result === undefined) throw new MappingError('the mapping gave no value', undefined)
  return result
}

function describe (error: unknown): string {
  const { message, position, token } = error as { message?: string, position?: number, token?: string }
  const where = position === undefined ? '' : ` at character ${position}${token === undefined ? '' : ` (${token})`}`
  return `${message ?? String(error)}${where}`
}
