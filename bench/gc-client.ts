import { askPreload } from './preload-socket.js'
import type { GcWindowPauses } from './gc-ring.js'
import type { GcWindowRequest } from './gc-protocol.js'

/**
 * Asks a server's GC preload (bench/gc-preload.ts) for the pauses of [fromMs, toMs] over its Unix socket. Rejects
 * when the preload does not answer within `timeoutMs` (a server started without it, or one that died).
 */
export async function askGcPauses (socketPath: string, window: GcWindowRequest, timeoutMs = 5000): Promise<GcWindowPauses> {
  const answer = await askPreload('GC preload', socketPath, window, timeoutMs) as GcWindowPauses | { error: string }
  if ('error' in answer) throw new Error(`GC preload at ${socketPath}: ${answer.error}`)
  return answer
}
