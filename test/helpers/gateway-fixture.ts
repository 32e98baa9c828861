import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isCollection, isMap, isNode, isScalar, isSeq, parseDocument, type Document } from 'yaml'
import { buildTestApp, type TestApp, type TestAppOptions } from './build-app.js'
import { repoPath } from './paths.js'
import { spawnGateway, type SpawnedGateway, type SpawnOptions } from './spawn-gateway.js'

/**
 * The scenarios of test/fixtures/gateway/; `shipped` is the demo gateway.yaml at the repository root and `cluster`
 * docker/gateway.cluster.yaml (what compose mounts and `npm run cluster` serves).
 */
export type FixtureName = 'shipped' | 'minimal' | 'cluster'

/** A key path in the config: `'server.data_dir'`, or segments when a key holds a dot (`['routes', 0, 'path']`). */
export type KeyPath = string | readonly (string | number)[]

interface Teardown { teardown (fn: () => unknown): void }

/** A fixture written to a fresh temporary folder (`dir/gateway.yaml`; relative paths resolve against `dir`). */
export interface FixtureFile {
  dir: string
  file: string
  /** Rewrites the file with `fixture` (e.g. an edited copy, before a reload). */
  write (fixture: GatewayFixture): Promise<void>
  remove (): Promise<void>
}

/** A real `lanegate start` on a fixture, ended (SIGTERM, exit awaited) and its folder removed at teardown. */
export interface StartedFixture extends FixtureFile {
  gateway: SpawnedGateway
}

function segments (path: KeyPath): (string | number)[] {
  return typeof path === 'string' ? path.split('.') : [...path]
}

const SHIPPED: Partial<Record<FixtureName, string>> = { shipped: 'gateway.yaml', cluster: 'docker/gateway.cluster.yaml' }

function fixtureText (name: FixtureName): string {
  return readFileSync(repoPath(SHIPPED[name] ?? `test/fixtures/gateway/${name}.yaml`), 'utf8')
}

/**
 * One gateway configuration for a test: a fixture parsed as a YAML document, edited by key path (the comments and
 * the rest of the file stay as they are), then booted in-process or started as a real process. Edits return a
 * new fixture, so a test can derive several variants from one base.
 */
export class GatewayFixture {
  private constructor (private readonly doc: Document) {}

  /** A test's own configuration text (a helper's generated config) as a fixture to edit. */
  static parse (text: string): GatewayFixture {
    return new GatewayFixture(parseDocument(text))
  }

  /** Loads a scenario from test/fixtures/gateway/ (or the shipped gateway.yaml). */
  static load (name: FixtureName = 'shipped'): GatewayFixture {
    const fixture = new GatewayFixture(parseDocument(fixtureText(name)))
    // The demo's content folder is relative to gateway.yaml; a copy in a temporary folder must find it.
    return name === 'shipped' ? fixture.set('services.content.source_dir', repoPath('content')) : fixture
  }

  /**
   * Sets `path` to `value` (a scalar, list or mapping). The parent must exist: a typo in a path fails loudly. A
   * scalar or flow value it replaces keeps its line comment, so an edited text differs from the file on that key only.
   */
  set (path: KeyPath, value: unknown): GatewayFixture {
    const keys = segments(path)
    const copy = this.copy()
    copy.parentOf(keys)
    const node = copy.doc.createNode(value, { flow: typeof value === 'object' && value !== null })
    const old: unknown = copy.doc.getIn(keys, true)
    if (isNode(old) && (isScalar(old) || (isCollection(old) && old.flow === true))) node.comment = old.comment
    copy.doc.setIn(keys, node)
    return copy
  }

  /** Appends `value` to the list at `path` (a route's chain, a target list), which must exist. */
  append (path: KeyPath, value: unknown): GatewayFixture {
    const keys = segments(path)
    const copy = this.copy()
    const list = copy.doc.getIn(keys, true)
    if (!isSeq(list)) throw new Error(`fixture has no list at ${keys.join('.')} to append to`)
    list.add(copy.doc.createNode(value, { flow: true }))
    return copy
  }

  /** Renames the key at `path` in place (its value, line and comments stay): a typo'd key for load-error tests. */
  rename (path: KeyPath, newKey: string): GatewayFixture {
    const keys = segments(path)
    const copy = this.copy()
    const parent = keys.length === 1 ? copy.doc.contents : copy.doc.getIn(keys.slice(0, -1), true)
    const pair = isMap(parent) ? parent.items.find((item) => isScalar(item.key) && item.key.value === keys.at(-1)) : undefined
    if (pair === undefined) throw new Error(`fixture has no ${keys.join('.')} to rename`)
    pair.key = copy.doc.createNode(newKey)
    return copy
  }

  /** Removes `path`, which must exist. */
  delete (path: KeyPath): GatewayFixture {
    const keys = segments(path)
    const copy = this.copy()
    if (!copy.doc.hasIn(keys)) throw new Error(`fixture has no ${keys.join('.')} to delete`)
    copy.doc.deleteIn(keys)
    return copy
  }

  /** The value at `path` as plain data (undefined when absent). */
  get (path: KeyPath): unknown {
    const node = this.doc.getIn(segments(path), true) as { toJSON?: () => unknown } | undefined
    return typeof node?.toJSON === 'function' ? node.toJSON() : node
  }

  /** The configuration as YAML text (no line folding: `${ENV}` references stay on their line). */
  text (): string {
    return this.doc.toString({ lineWidth: 0 })
  }

  /** Writes the fixture to `gateway.yaml` in a fresh temporary folder. */
  async write (): Promise<FixtureFile> {
    const dir = await mkdtemp(join(tmpdir(), 'lanegate-cfg-'))
    const file = join(dir, 'gateway.yaml')
    await writeFile(file, this.text())
    return {
      dir,
      file,
      write: (fixture: GatewayFixture) => writeFile(file, fixture.text()),
      remove: () => rm(dir, { recursive: true, force: true }),
    }
  }

  /** Boots the gateway in this process (fresh data dir, logs captured); use `app.inject`. Closed at teardown. */
  async boot (t: Teardown, options: Omit<TestAppOptions, 'yaml' | 'file'> = {}): Promise<TestApp> {
    const booted = await buildTestApp({ ...options, yaml: this.text() })
    t.teardown(() => booted.close())
    return booted
  }

  /**
   * Starts `lanegate start` on the fixture written to a temporary folder (spawnGateway's options: port 0, the admin
   * listener on a free port). At teardown the process gets SIGTERM, its exit is awaited, then the folder goes.
   */
  async start (t: Teardown, options: Omit<SpawnOptions, 'config'> = {}): Promise<StartedFixture> {
    const written = await this.write()
    let gateway: SpawnedGateway
    try {
      gateway = await spawnGateway({ ...options, config: written.file })
    } catch (error) {
      await written.remove()
      throw error
    }
    t.teardown(async () => {
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGTERM')
      await gateway.exited
      await written.remove()
    })
    return { ...written, gateway }
  }

  private copy (): GatewayFixture {
    return new GatewayFixture(this.doc.clone())
  }

  private parentOf (keys: readonly (string | number)[]): void {
    const parent = keys.length === 1 ? this.doc.contents : this.doc.getIn(keys.slice(0, -1), true)
    if (!isMap(parent) && !isSeq(parent)) throw new Error(`fixture has no ${keys.slice(0, -1).join('.') || 'top-level mapping'} to set ${keys.join('.')} in`)
  }
}

/** Shorthand for `GatewayFixture.load(name)`. */
export function gatewayFixture (name: FixtureName = 'shipped'): GatewayFixture {
  return GatewayFixture.load(name)
}
