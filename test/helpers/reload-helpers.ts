import { rename, writeFile } from 'node:fs/promises'
import type { SpawnedGateway } from './spawn-gateway.js'

/**
 * Replaces a running gateway's config file in one step (written aside, then renamed, so the gateway never reads
 * half a file) and sends it SIGHUP, as an operator's reload.
 */
export async function rewriteAndReload (gateway: SpawnedGateway, file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text)
  await rename(`${file}.tmp`, file)
  gateway.child.kill('SIGHUP')
}
