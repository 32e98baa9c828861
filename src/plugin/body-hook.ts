import type { FastifyRequest } from 'fastify'
import type { Refusal } from './step.js'

/**
 * The body phase's types (docs/plugins.md, "Bodies"): what a response body hook is given and may return. Kept apart
 * from body-phase.ts so the response phase can name them without an import cycle.
 */

/** An upstream's answer, read whole (at most the hook's `maxBodyBytes`), as a response body hook sees it. */
export interface UpstreamAnswer {
  /** The upstream's status: any, 4xx/5xx included (a SOAP Fault comes as a 500). */
  readonly status: number
  /** The upstream's headers (lower-case names), before the gateway filters them for the caller. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** The whole body (asked for without compression: `accept-encoding: identity`). */
  readonly body: Buffer
}

/** What a response body hook answers the caller with instead of the upstream's answer. */
export interface ReplacedAnswer {
  /** Defaults to the upstream's status (a 4xx/5xx upstream status given back here is sent as it is). */
  readonly status?: number
  /** Set over the upstream's filtered headers (`content-length` is computed; `content-type` belongs here). */
  readonly headers?: Readonly<Record<string, string>>
  readonly body: string | Buffer
}

/**
 * A response body hook: `undefined` leaves the answer as it came (a 4xx/5xx then becomes `upstream_error` as on
 * every relayed route), a `ReplacedAnswer` replaces it, a refusal (`context.refuse`) answers an error in the route's
 * envelope. May return a promise. Hooks run in registration (chain) order, each over the previous one's result.
 */
export type ResponseBodyHook = (answer: UpstreamAnswer, request: FastifyRequest) => ReplacedAnswer | Refusal | undefined | Promise<ReplacedAnswer | Refusal | undefined>
