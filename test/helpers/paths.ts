import { resolve } from 'node:path'

/** Tests run with the repository root as the working directory (tap's default), whatever the build directory. */
export function repoPath (...segments: string[]): string {
  return resolve(process.cwd(), ...segments)
}
