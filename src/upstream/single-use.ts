import type { Target } from './target.js'
import { Upstream } from './upstream.js'

/**
 * An upstream for one request, kept nowhere: what a registry the snapshots declare serves a key the last snapshot
 * no longer has (a request whose chain started before a reload removed its block or store, a fan-out delivery
 * that looked its lane up just before). Each target's pool is closed as soon as the request has been handed to it
 * (`Pool.close` lets the requests it already holds finish, then closes its connections), so a late request is
 * still served, and leaves neither a pool nor an idle keep-alive socket behind.
 *
 * The close is queued as a microtask after `pick`: the engine's relay and call both dispatch on the picked
 * target's pool synchronously after picking it, so the request is in the pool before the close runs. A retry
 * (a proxy block with several targets) picks another target, whose pool is still open; the one tried is never
 * picked again.
 */
export class SingleUseUpstream extends Upstream {
  override pick (tried?: readonly Target[]): Target | undefined {
    const target = super.pick(tried)
    if (target !== undefined) queueMicrotask(() => { void target.retire() })
    return target
  }
}
