import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { GatewayError, PolicyAnswer } from './gateway-error.js'
import { sendPolicyAnswer } from './send-policy-answer.js'
import type { PolicyStep, StepOutcome } from './step.js'

/** Told which step of a chain refused a request (the gateway names its policy in the access log and spans). */
export type RefusalObserver = (request: FastifyRequest, step: PolicyStep) => void

/**
 * Runs `chain` from step `from`: synchronous steps in a loop, a promise resumes the loop when it settles. A step
 * refuses the request by returning (or resolving to) a GatewayError, or by throwing; both end the chain with
 * that error. The contract's semantics of a chain: the gateway's chain runner and the policy test harness both
 * run steps with it. `refused`, when given, is told the step that refused (never a step that answered).
 */
export function runSteps (chain: readonly PolicyStep[], from: number, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, refused?: RefusalObserver): void {
  for (let i = from; i < chain.length; i++) {
    let outcome: StepOutcome | Promise<StepOutcome>
    try {
      outcome = (chain[i] as PolicyStep)(request, reply)
    } catch (error) {
      failed(error, chain[i] as PolicyStep, request, done, refused)
      return
    }
    if (outcome === undefined) continue
    if (outcome instanceof GatewayError) {
      end(outcome, chain[i] as PolicyStep, request, reply, done, refused)
      return
    }
    outcome.then(
      function stepSettled (settled) {
        if (settled instanceof GatewayError) end(settled, chain[i] as PolicyStep, request, reply, done, refused)
        else runSteps(chain, i + 1, request, reply, done, refused)
      },
      function stepFailed (error: unknown) { failed(error, chain[i] as PolicyStep, request, done, refused) },
    )
    return
  }
  done()
}

/**
 * A step ended the chain: a policy's answer is sent as the route's reply (`done` is then never called, as fastify
 * asks of a hook that replies); a refusal goes to the error handler, which renders it in the route's envelope.
 */
function end (outcome: GatewayError, step: PolicyStep, request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, refused: RefusalObserver | undefined): void {
  if (outcome instanceof PolicyAnswer) {
    sendPolicyAnswer(reply, outcome)
    return
  }
  refused?.(request, step)
  done(outcome)
}

/** A step threw (or its promise rejected): a thrown refusal refuses like a returned one. */
function failed (thrown: unknown, step: PolicyStep, request: FastifyRequest, done: HookHandlerDoneFunction, refused: RefusalObserver | undefined): void {
  if (thrown instanceof GatewayError && !(thrown instanceof PolicyAnswer)) refused?.(request, step)
  done(asError(thrown))
}

/** `done(undefined)` would let the request through: a step that throws nothing still fails the request. */
function asError (thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`a policy step failed with ${String(thrown)}`)
}
