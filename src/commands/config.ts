import { readFile, writeFile } from 'node:fs/promises'
import { userInfo } from 'node:os'
import { parseArgs } from 'node:util'
import { ConfigError, formatProblem } from '../config/config-error.js'
import { openConfigStore, type ConfigStore, type ConfigVersion } from '../config-store/config-store.js'
import { ConfigStoreError } from '../config-store/errors.js'
import { fleetStatus } from '../config-store/fleet-status.js'
import { historyLines, showVersion, statusLines, unifiedDiff } from '../config-store/format.js'
import { counted } from '../errors/counted.js'
import { parseGatewayConfig, type LoadedGatewayConfig } from '../config/second-pass/load-gateway-config.js'
import { storedFileName } from '../config-store/start-config.js'
import type { Command } from './command.js'

/** The exit codes of `lanegate config`, for scripts (documented in the usage and docs/operations.md). */
export const CONFIG_EXIT = {
  ok: 0,
  /** `diff`: the two differ; `status`: the fleet has not converged (or no instance is live). */
  differs: 1,
  /** The file is not a valid config: nothing was stored. */
  invalid: 2,
  /** `--if-version` is not the head: someone pushed meanwhile; nothing was stored. */
  conflict: 3,
  /** The store could not be reached; nothing was stored. */
  unreachable: 4,
  /** No such version (or the store holds none yet). */
  notFound: 5,
  /** The store answered with an error (a permission, a schema): retrying will not help; nothing was stored. */
  failed: 6,
  usage: 64,
} as const

const USAGE = `lanegate config <subcommand> [--store URL] …

The fleet's gateway.yaml, versioned in PostgreSQL (docs/operations.md, "Several machines"). The store is
--store URL or $LANEGATE_CONFIG_STORE (a PostgreSQL URL); its tables are created on first use.

  push FILE -m MSG [--if-version N] [--author A]
                      Validates FILE as \`lanegate validate\` does, its relative paths taken from the working
                      directory as each instance takes them, then stores it as the new head (the text exactly as
                      written; \${ENV} references stay references). Instances following the store apply it.
                      --if-version N: refused (exit 3) unless the head is still N (0: the store is empty).
  pull [VERSION] [-o FILE]
                      Prints a version's text (default the head), or writes it to FILE.
  show VERSION        The version's record (hash, parent, author, time, message) and its text.
  history [--limit N] Newest first: version, hash prefix, time, author, message, instances that run it.
  rollback VERSION -m MSG [--if-version N] [--author A]
                      Pushes a new version whose text is VERSION's (validated again first).
  diff [A] [B]        Unified diff from A to B, each a version number or a file. No argument: the head's parent
                      to the head; one: A to the head (a file: the head to that file, what pushing it changes).
  diff --effect [A] [B]
                      What the change does instead of its text, from the explain engine: routes added or removed,
                      chains changed, and per route the service accounts that gain or lose access.
  status              Every live instance (id, host, pid, workers), the version it applied and since when, its
                      last heartbeat, any version it refused, and whether the fleet has converged on the head.

The author is --author, else the OS user. Exit codes: 0 done (diff: no difference; status: converged);
1 diff: they differ, status: not converged; 2 the file is invalid (nothing stored); 3 conflict, the head
moved (nothing stored); 4 the store is unreachable; 5 no such version; 6 the store answered with an error
(a permission, a schema: retrying will not help); 64 usage error.`

const OPTIONS = {
  store: { type: 'string' },
  message: { type: 'string', short: 'm' },
  'if-version': { type: 'string' },
  author: { type: 'string' },
  output: { type: 'string', short: 'o' },
  limit: { type: 'string' },
  effect: { type: 'boolean' },
} as const

type Values = ReturnType<typeof parseArgs<{ args: string[], options: typeof OPTIONS, allowPositionals: true }>>['values']

class UsageError extends Error {}

export const configCommand: Command = {
  name: 'config',
  summary: 'The fleet\'s versioned gateway.yaml in PostgreSQL: push, pull, show, history, rollback, diff, status',
  usage: USAGE,
  run: runConfig,
}

async function runConfig (args: string[]): Promise<number> {
  let parsed: { values: Values, positionals: string[] }
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true })
  } catch (error) {
    console.error(`config: ${(error as Error).message}\n\n${USAGE}`)
    return CONFIG_EXIT.usage
  }
  const [sub = '', ...rest] = parsed.positionals
  const run = SUBCOMMANDS[sub]
  if (run === undefined) {
    console.error(sub === '' ? USAGE : `config: unknown subcommand "${sub}"\n\n${USAGE}`)
    return CONFIG_EXIT.usage
  }
  let store: ConfigStore | undefined
  try {
    const url = parsed.values.store ?? process.env.LANEGATE_CONFIG_STORE
    if (url === undefined || url === '') throw new UsageError('no store: pass --store URL or set LANEGATE_CONFIG_STORE')
    // Validate a file before connecting: an invalid push fails the same with the store down.
    const prepared = sub === 'push' ? await validatedFile(rest[0]) : undefined
    store = await openConfigStore(url)
    return await run({ store, values: parsed.values, args: rest, prepared })
  } catch (error) {
    return report(error)
  } finally {
    await store?.close()
  }
}

interface Context {
  store: ConfigStore
  values: Values
  args: string[]
  /** `push`: the file's text, validated. */
  prepared: string | undefined
}

const SUBCOMMANDS: Record<string, (c: Context) => Promise<number>> = {
  push: async ({ store, values, prepared, args }) => {
    const pushed = await store.push({ text: prepared ?? '', message: message(values), author: author(values), ifVersion: ifVersion(values) })
    console.log(`pushed ${args[0]} as version ${pushed.version} (sha256 ${pushed.sha256.slice(0, 12)}, parent ${pushed.parent ?? '-'})`)
    return CONFIG_EXIT.ok
  },
  pull: async ({ store, values, args }) => {
    const version = await versionOrHead(store, args[0])
    if (values.output === undefined) process.stdout.write(version.text)
    else {
      await writeFile(values.output, version.text)
      console.error(`version ${version.version} written to ${values.output}`)
    }
    return CONFIG_EXIT.ok
  },
  show: async ({ store, args }) => {
    if (args[0] === undefined) throw new UsageError('show: which VERSION?')
    process.stdout.write(showVersion(await versionOrHead(store, args[0])))
    return CONFIG_EXIT.ok
  },
  history: async ({ store, values }) => {
    const limit = values.limit === undefined ? 50 : positive(values.limit, '--limit')
    const [versions, head, rows] = await Promise.all([store.history(limit), store.headVersion(), store.instances()])
    for (const line of historyLines(versions, fleetStatus(head, rows))) console.log(line)
    return CONFIG_EXIT.ok
  },
  rollback: async ({ store, values, args }) => {
    if (args[0] === undefined) throw new UsageError('rollback: which VERSION?')
    const old = await versionOrHead(store, args[0])
    // Relative paths from the working directory, as instances read a stored text.
    await validated(old.text, `version ${old.version}`, `version ${old.version}`)
    const pushed = await store.push({ text: old.text, message: message(values), author: author(values), ifVersion: ifVersion(values), rollbackOf: old.version })
    console.log(`version ${pushed.version} restores version ${old.version} (sha256 ${pushed.sha256.slice(0, 12)})`)
    return CONFIG_EXIT.ok
  },
  diff: async ({ store, args, values }) => {
    const [from, to] = await diffSides(store, args)
    if (values.effect === true) return effectOf(from, to)
    const patch = unifiedDiff(from, to)
    process.stdout.write(patch)
    return patch === '' ? CONFIG_EXIT.ok : CONFIG_EXIT.differs
  },
  status: async ({ store }) => {
    const [head, rows] = await Promise.all([store.headVersion(), store.instances()])
    const fleet = fleetStatus(head, rows)
    for (const line of statusLines(fleet)) console.log(line)
    return fleet.converged ? CONFIG_EXIT.ok : CONFIG_EXIT.differs
  },
}

/**
 * Reads and validates FILE as `lanegate validate` does, but with its relative paths (TLS files, content folders,
 * plugins) taken from the working directory, as every instance and the admin listener's push take them; returns
 * its text as written. Problems name FILE.
 */
async function validatedFile (file: string | undefined): Promise<string> {
  if (file === undefined) throw new UsageError('push: which FILE?')
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new InvalidConfig(file, new ConfigError(file, [{ path: '', message: `cannot read the file: ${(error as Error).message}` }]))
  }
  await validated(text, storedFileName(process.cwd(), 0), file)
  return text
}

/** Both passes on `text`, its relative paths anchored at file `anchor`; its problems are reported under `name`. */
async function validated (text: string, anchor: string, name: string): Promise<LoadedGatewayConfig> {
  try {
    return await parseGatewayConfig(text, anchor)
  } catch (error) {
    if (error instanceof ConfigError) throw new InvalidConfig(name, error)
    throw error
  }
}

/** `diff --effect`: both sides validated, then compared route by route; exit 1 when the change affects a route. */
async function effectOf (from: Side, to: Side): Promise<number> {
  if (from.text === '' || to.text === '') throw new UsageError('diff --effect: both sides must be configs (the first version has no parent to compare with)')
  const { configEffect, formatEffect } = await import('../describe/config-effect.js')
  const [before, after] = await Promise.all([from, to].map(async (side) => validated(side.text, side.file, side.name)))
  const text = formatEffect(configEffect(before, after))
  process.stdout.write(text === '' ? `no effect on routes, chains or access from ${from.name} to ${to.name}\n` : text)
  return text === '' ? CONFIG_EXIT.ok : CONFIG_EXIT.differs
}

class InvalidConfig extends Error {
  constructor (readonly file: string, readonly error: ConfigError) { super(error.message) }
}

/** One side of a diff: its name in the output, its text, and the file that anchors its relative paths. */
interface Side {
  name: string
  text: string
  file: string
}

async function diffSides (store: ConfigStore, args: string[]): Promise<[Side, Side]> {
  if (args.length === 0) {
    const head = await versionOrHead(store, undefined)
    const parent = head.parent === null ? { name: 'empty', text: '', file: '' } : named(await versionOrHead(store, String(head.parent)))
    return [parent, named(head)]
  }
  if (args.length === 1) {
    const one = await side(store, args[0] as string)
    const head = named(await versionOrHead(store, undefined))
    // A file: what pushing it would change; a version: what happened since.
    return isVersion(args[0] as string) ? [one, head] : [head, one]
  }
  return [await side(store, args[0] as string), await side(store, args[1] as string)]
}

async function side (store: ConfigStore, arg: string): Promise<Side> {
  if (isVersion(arg)) return named(await versionOrHead(store, arg))
  try {
    return { name: arg, text: await readFile(arg, 'utf8'), file: arg }
  } catch (error) {
    throw new UsageError(`cannot read ${arg}: ${(error as Error).message}`)
  }
}

const named = (v: ConfigVersion): Side => ({ name: `version ${v.version}`, text: v.text, file: storedFileName(process.cwd(), v.version) })
const isVersion = (arg: string): boolean => /^\d+$/.test(arg)

async function versionOrHead (store: ConfigStore, arg: string | undefined): Promise<ConfigVersion> {
  if (arg === undefined) {
    const head = await store.head()
    if (head === undefined) throw new ConfigStoreError('empty', 'the store holds no version yet: push one with lanegate config push FILE -m MSG')
    return head
  }
  const version = await store.get(positive(arg, 'VERSION'))
  if (version === undefined) throw new ConfigStoreError('not_found', `no version ${arg} in the store (the head is ${await store.headVersion()})`)
  return version
}

function positive (value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${what} must be a positive whole number, not "${value}"`)
  return Number(value)
}

function message (values: Values): string {
  if (values.message === undefined || values.message.trim() === '') throw new UsageError('-m MSG is required: say why')
  return values.message
}

function author (values: Values): string {
  return values.author ?? process.env.LANEGATE_CONFIG_AUTHOR ?? userInfo().username
}

function ifVersion (values: Values): number | undefined {
  const raw = values['if-version']
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw new UsageError(`--if-version must be a version number (0: the store is empty), not "${raw}"`)
  return Number(raw)
}

/** One message on stderr and the exit code a script can test. */
function report (error: unknown): number {
  if (error instanceof UsageError) {
    console.error(`config: ${error.message}`)
    return CONFIG_EXIT.usage
  }
  if (error instanceof InvalidConfig) {
    for (const p of error.error.problems) console.error(`error: ${formatProblem(error.file, p)}`)
    console.error(`${error.file}: ${counted(error.error.problems.length, 'error')}; nothing stored`)
    return CONFIG_EXIT.invalid
  }
  if (error instanceof ConfigStoreError) {
    console.error(`config: ${error.code === 'conflict' ? 'conflict: ' : ''}${error.message}`)
    if (error.code === 'conflict') return CONFIG_EXIT.conflict
    if (error.code === 'unreachable') return CONFIG_EXIT.unreachable
    if (error.code === 'failed') return CONFIG_EXIT.failed
    return CONFIG_EXIT.notFound
  }
  throw error
}
