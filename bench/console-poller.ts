import { parseArgs } from 'node:util'

/**
 * An open console page, as the gateway sees it (`--console`): once a second the overview, asking only for the points
 * after the newest it has (as console/console.js does), then the upstreams view. It is a process of its own,
 * started by the orchestrator (servers.ts) and pinned to the load generator's core, never a child of the gateway:
 * the gateway's CPU is read from its process tree, and a poller inside that tree billed its own CPU to the gateway.
 * Every round is reported to the orchestrator over IPC, so a console that fails to answer fails the run.
 */

/** Poller → orchestrator, once per round. */
export type PollReport = { type: 'poll', ok: true } | { type: 'poll', ok: false, error: string }

const { values } = parseArgs({ options: { url: { type: 'string' } } })
const base = values.url
if (base === undefined) throw new Error('console-poller needs --url http://127.0.0.1:PORT (the admin listener)')

let since = 0

async function getJson (path: string): Promise<unknown> {
  const res = await fetch(base + path, { headers: { accept: 'application/json' } })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${body.slice(0, 200)}`)
  return JSON.parse(body) as unknown
}

async function poll (): Promise<void> {
  const overview = await getJson(`/api/console/overview?since=${since}`) as { series: Array<{ t: number }> }
  for (const point of overview.series) since = Math.max(since, point.t)
  await getJson('/api/console/upstreams')
}

function report (message: PollReport): void {
  process.send?.(message)
}

async function round (): Promise<void> {
  try {
    await poll()
    report({ type: 'poll', ok: true })
  } catch (error) {
    report({ type: 'poll', ok: false, error: (error as Error).message })
  }
}

void round()
const timer = setInterval(() => { void round() }, 1000)
// The orchestrator going away (or closing the channel) ends the poller.
process.on('disconnect', () => { clearInterval(timer) })
