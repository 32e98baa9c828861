import { isMessage, type CircuitMessage } from '../ipc/messages.js'
import { applySharedTransition, useBreakerSharing } from '../upstream/breaker-sharing.js'

/**
 * A worker's side of shared circuit breakers (upstream/breaker-sharing.ts): each opening or closing of one of its
 * breakers goes to the primary, and the transitions the primary passes on from the other workers are applied to
 * this worker's breaker of the same upstream and target. Installed before the worker boots. Returns a function
 * that stops listening.
 */
export function shareBreakersWithPrimary (): () => void {
  useBreakerSharing({
    publish (transition) {
      if (transition.to === 'half_open') return
      const message: CircuitMessage = { channel: 'lanegate:circuit', ...transition, to: transition.to }
      if (process.connected) process.send?.(message, () => {})
    },
  })
  function onPrimaryMessage (message: unknown): void {
    if (!isMessage<CircuitMessage>(message, 'lanegate:circuit')) return
    if (message.to !== 'open' && message.to !== 'closed') return
    applySharedTransition({
      upstream: String(message.upstream),
      url: String(message.url),
      to: message.to,
      reason: String(message.reason),
      openMs: Number(message.openMs),
      until: Number(message.until),
    })
  }
  process.on('message', onPrimaryMessage)
  return () => { process.off('message', onPrimaryMessage) }
}
