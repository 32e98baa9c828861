import { isMessage, type ReloadCommand, type ShutdownCommand } from '../ipc/messages.js'

/**
 * The worker's side of `server.workers` > 1: the primary alone polls the config file and takes SIGHUP, and tells
 * every worker to reload (`reload` is the worker's own `gateway.reload`). On the primary's shutdown command the
 * worker signals itself SIGTERM, which runs its usual drain (in-flight requests get server.shutdown_grace_ms) —
 * unless a signal already reached it (Ctrl-C signals the whole process group): a second signal would make it exit
 * at once. Returns a function that stops following.
 */
export function followPrimary (reload: () => void): () => void {
  let signalled = false
  const onSignal = (): void => { signalled = true }
  function onMessage (message: unknown): void {
    if (isMessage<ReloadCommand>(message, 'lanegate:reload')) reload()
    else if (isMessage<ShutdownCommand>(message, 'lanegate:shutdown')) {
      // The terminal's SIGINT and the primary's command arrive together; let the signal land first.
      setTimeout(() => { if (!signalled) process.kill(process.pid, 'SIGTERM') }, 50)
    }
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  process.on('message', onMessage)
  return () => {
    process.off('message', onMessage)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
