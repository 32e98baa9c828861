import type { FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayError } from './gateway-error.js'

/**
 * A step's refusal: the error the route answers with, rendered in the route's envelope. Built with
 * `context.refuse` (or, inside the gateway, `new GatewayError`).
 */
export type Refusal = GatewayError

/**
 * What a step gives back: nothing (the request goes on) or the refusal that ends it.
 *
 * Refusals are returned rather than thrown: V8 builds a message object for every throw, a cost a flood of refusals
 * feels (docs/performance.md, "The tricks in the code"). A thrown error still refuses the request the same way, so
 * helpers deep inside a step, and unexpected failures, may throw.
 */
export type StepOutcome = Refusal | undefined | void

/**
 * One step of a route's chain: returns nothing (go on) or a refusal (the error handler renders it in the route's
 * envelope), directly or through a promise. Steps never write response bodies; they may set headers and record
 * what they learned on `request.gw`.
 */
export type PolicyStep = (request: FastifyRequest, reply: FastifyReply) => StepOutcome | Promise<StepOutcome>
