import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './spawn-gateway.js'
import { waitFor } from './wait-for.js'

export const RSYSLOGD = '/usr/sbin/rsyslogd'

export interface OwnRsyslog {
  /** The loopback port rsyslog listens on, UDP and TCP both. */
  port: number
  /** The lines rsyslog wrote so far: `protocol-version|pri|hostname|app-name|procid|msgid|structured-data|msg`. */
  lines (): Promise<string[]>
  stop (): Promise<void>
}

/**
 * Debian's rsyslogd, started with a config of its own in a temp folder: imudp and imtcp on one free loopback port,
 * every message written to a file with the fields rsyslog parsed out of it (a message that is not RFC 5424 has
 * protocol-version 0 and its fields guessed from RFC 3164). Resolves once its TCP input accepts connections.
 */
export async function startOwnRsyslog (): Promise<OwnRsyslog> {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-rsyslog-'))
  const port = await freePort()
  const out = join(dir, 'received.log')
  await writeFile(join(dir, 'rsyslog.conf'), `
global(workDirectory="${dir}")
module(load="imudp")
module(load="imtcp")
template(name="parsed" type="string" string="%protocol-version%|%pri%|%hostname%|%app-name%|%procid%|%msgid%|%structured-data%|%msg%\\n")
ruleset(name="access") { action(type="omfile" file="${out}" template="parsed") }
input(type="imudp" address="127.0.0.1" port="${port}" ruleset="access")
input(type="imtcp" address="127.0.0.1" port="${port}" ruleset="access")
`)
  const child: ChildProcess = spawn(RSYSLOGD, ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], { stdio: ['ignore', 'pipe', 'pipe'] })
  let errors = ''
  child.stderr?.on('data', (d: Buffer) => { errors += d.toString() })
  child.stdout?.on('data', (d: Buffer) => { errors += d.toString() })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  await waitFor(() => new Promise<boolean>((resolve) => {
    if (child.exitCode !== null) throw new Error(`rsyslogd exited: ${errors}`)
    const socket = connect({ host: '127.0.0.1', port }, () => { socket.destroy(); resolve(true) })
    socket.on('error', () => resolve(false))
  }), { what: `rsyslogd listening on 127.0.0.1:${port}` })
  return {
    port,
    lines: async () => (await readFile(out, 'utf8').catch(() => '')).split('\n').filter((l) => l !== ''),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** Whether rsyslogd is installed (.ci/run installs it; `LANEGATE_REQUIRE_SERVICES=1` makes its absence a failure). */
export function rsyslogAvailable (): boolean {
  return existsSync(RSYSLOGD)
}
