import { rename, writeFile } from 'node:fs/promises'
import type { SpawnedGateway } from './spawn-gateway.js'

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 20 ms until it holds or `ms` have passed; the last check's answer. */
export async function until (check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await sleep(20)
  }
  return check()
}

/**
 * Replaces a running gateway's config file in one step (written aside, then renamed, so the gateway never reads
 * half a file) and sends it SIGHUP, as an operator's reload.
 */
export async function rewriteAndReload (gateway: SpawnedGateway, file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text)
  await rename(`${file}.tmp`, file)
  gateway.child.kill('SIGHUP')
}
