import type { ChildProcess } from 'node:child_process'

/** A spawned process with its stdout and stderr collected into one text, in the order they came. */
export interface CollectedProcess<C extends ChildProcess = ChildProcess> {
  child: C
  /** Everything it printed so far, stdout and stderr together. */
  output: () => string
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>
}

/** Collects what `child` prints (both streams must be pipes) and when it exits. */
export function collectOutput<C extends ChildProcess> (child: C): CollectedProcess<C> {
  let output = ''
  child.stdout?.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { output += d.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { child, output: () => output, exited }
}
