import { unwatchFile, watchFile } from 'node:fs'

/**
 * Calls `onChange` when the file changes. Polls the file's stat (every 500 ms) rather than using fs.watch:
 * editors that save by writing a new file and renaming it over the old one break inotify watches, and polling
 * stays correct on every filesystem. Returns a function that stops watching.
 */
export function watchConfigFile (file: string, onChange: () => void, intervalMs = 500): () => void {
  const listener = (current: { mtimeMs: number, size: number, ino: number }, previous: { mtimeMs: number, size: number, ino: number }): void => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size || current.ino !== previous.ino) onChange()
  }
  watchFile(file, { interval: intervalMs, persistent: false }, listener)
  return () => unwatchFile(file, listener)
}
