import { isMessage, type ProberCommand, type ProbeResultMessage } from '../ipc/messages.js'
import { applyProbeResult, probeNow, useProbeSharing } from '../upstream/probe-sharing.js'

/**
 * A worker's side of "one prober per host" (upstream/probe-sharing.ts): it probes only once the primary names it
 * the prober, publishes each result to the primary, and applies the results the primary passes on from the
 * prober. Installed before the worker boots, so the checks its first snapshot starts do not probe on their own.
 * Returns a function that stops listening.
 */
export function shareProbesWithPrimary (): () => void {
  let probing = false
  useProbeSharing({
    get probing () { return probing },
    publish (result) {
      const message: ProbeResultMessage = { channel: 'lanegate:probe', ...result }
      if (process.connected) process.send?.(message, () => {})
    },
  })
  function onPrimaryMessage (message: unknown): void {
    if (isMessage<ProberCommand>(message, 'lanegate:prober')) {
      const was = probing
      probing = message.probing === true
      if (probing && !was) probeNow()
    } else if (isMessage<ProbeResultMessage>(message, 'lanegate:probe')) {
      applyProbeResult({ url: String(message.url), path: String(message.path), healthy: message.healthy === true })
    }
  }
  process.on('message', onPrimaryMessage)
  return () => { process.off('message', onPrimaryMessage) }
}
