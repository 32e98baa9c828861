import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

/** The repository root: this file compiles to <outDir>/bench/paths.js, and every outDir sits in the root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The ignored folder `npm run bench:peers` installs peer gateways into. */
export const PEERS_DIR = join(REPO_ROOT, 'bench', 'peers')

/** Where full runs write their JSON and markdown. */
export const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results')

/** A compiled sibling script of the harness (servers/…, load-worker). */
export function harnessScript (relative: string): string {
  return fileURLToPath(new URL(relative, import.meta.url))
}
