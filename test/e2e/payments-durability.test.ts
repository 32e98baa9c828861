import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createSqliteStore } from '../../src/store/sqlite/create-sqlite-store.js'

const CHILD = fileURLToPath(new URL('./fixtures/payments-sigkill-child.js', import.meta.url))

/** Runs the child until it prints its line, then SIGKILLs it; resolves the printed intent id. */
async function createThenKill (file: string): Promise<string> {
  const child = spawn(process.execPath, [CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const id = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /created (\S+)\n/.exec(out)
      if (match !== null) resolve(match[1] as string)
    })
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before printing: ${err}`)))
  })
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  const [code, signal] = await exited as [number | null, string | null]
  if (signal !== 'SIGKILL') throw new Error(`child ended with ${code}/${signal}, not SIGKILL`)
  return id
}

t.test('H8: an intent and an idempotency key acknowledged before SIGKILL are readable after reopening', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lanegate-kill-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'lanegate.db')
  const id = await createThenKill(file)

  const store = createSqliteStore(file)
  t.teardown(() => store.close())
  const intent = await store.payments.get(id, new Set(['org_hq']))
  t.same([intent?.id, intent?.status, intent?.amount, intent?.description], [id, 'requires_payment_method', 4200, 'before the kill'])
  t.same(await store.idempotency.begin({ clientId: 'svc-hq', route: 'create_intent', key: 'kill-1' },
    { fingerprint: 'fp', now: Date.now(), ttlMs: 86_400_000, abandonAfterMs: 60_000 }),
  { state: 'completed', response: { statusCode: 201, body: { id } } })
})
