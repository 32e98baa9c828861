import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { GatewayError, PolicyAnswer } from './gateway-error.js'
import { sendPolicyAnswer } from './send-policy-answer.js'
import type { PolicyStep, StepOutcome } from './step.js'

/**
 * Runs `chain` from step `from`: synchronous steps in a loop, a promise resumes the loop when it settles. A step
 * refuses the request by returning (or resolving to) a GatewayError, or by throwing; both end the chain with
 * that error. The contract's semantics of a chain: the gateway's chain runner and the policy test harness both
 * run steps with it.
 */
export function runSteps (chain: readonly PolicyStep[], from: number, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  for (let i = from; i < chain.length; i++) {
    let outcome: StepOutcome | Promise<StepOutcome>
    try {
      outcome = (chain[i] as PolicyStep)(request, reply)
    } catch (error) {
      failed(error, i, request, done)
      return
    }
    if (outcome === undefined) continue
    if (outcome instanceof GatewayError) {
      end(outcome, i, request, reply, done)
      return
    }
    outcome.then(
      function stepSettled (settled) {
        if (settled instanceof GatewayError) end(settled, i, request, reply, done)
        else runSteps(chain, i + 1, request, reply, done)
      },
      function stepFailed (error: unknown) { failed(error, i, request, done) },
    )
    return
  }
  done()
}

/**
 * A step ended the chain: a policy's answer is sent as the route's reply (`done` is then never called, as fastify
 * asks of a hook that replies); a refusal goes to the error handler, which renders it in the route's envelope.
 */
function end (outcome: GatewayError, step: number, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (outcome instanceof PolicyAnswer) {
    sendPolicyAnswer(reply, outcome)
    return
  }
  noteRefusal(outcome, step, request)
  done(outcome)
}

/** A step threw (or its promise rejected): a thrown refusal refuses like a returned one. */
function failed (thrown: unknown, step: number, request: FastifyRequest, done: HookHandlerDoneFunction): void {
  if (thrown instanceof GatewayError && !(thrown instanceof PolicyAnswer)) noteRefusal(thrown, step, request)
  done(asError(thrown))
}

/** Which step refused, for the access log (two writes, on refusals only). */
function noteRefusal (refusal: GatewayError, step: number, request: FastifyRequest): void {
  // A bare app (a plugin's own tests) may run steps with no request state.
  const gw = request.gw as FastifyRequest['gw'] | null | undefined
  if (gw === null || gw === undefined) return
  gw.refusedAt = step
  gw.refusal = refusal
}

/** `done(undefined)` would let the request through: a step that throws nothing still fails the request. */
function asError (thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`a policy step failed with ${String(thrown)}`)
}
