import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import t from 'tap'
import { buildTestApp } from '../helpers/build-app.js'
import { gatewayFixture } from '../helpers/gateway-fixture.js'

// Any growth per reload is at least one compile per reload, so ten reloads show it as surely as a hundred (each
// reload validates and builds a whole snapshot: a hundred took ~25 s of the suite on a loaded box).
const RELOADS = 10

/**
 * Ajv keeps every schema it compiles (its cache and its code scope hold the schema object and the validator) for
 * the life of the instance. A reload brings new schema objects (the fan-out payload schemas of the demo config):
 * compiled on a long-lived instance, every reload's stayed in memory for good. Counted here as compiles per Ajv
 * instance, which must not grow with the number of reloads.
 */
t.test('reloads do not keep adding their schemas to a long-lived Ajv', async (t) => {
  const compiles = new Map<Ajv, number>()
  const original = Ajv.prototype.compile
  Ajv.prototype.compile = function countedCompile (this: Ajv, ...args: Parameters<Ajv['compile']>) {
    compiles.set(this, (compiles.get(this) ?? 0) + 1)
    return original.apply(this, args)
  } as Ajv['compile']
  t.teardown(() => { Ajv.prototype.compile = original })

  const dir = await mkdtemp(join(tmpdir(), 'lanegate-reload-schemas-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const demo = gatewayFixture().text()
  const file = join(dir, 'gateway.yaml')
  await writeFile(file, demo)
  const gw = await buildTestApp({ file, logLevel: 'silent' })
  t.teardown(() => gw.close())

  const mostOnOneInstance = (): number => Math.max(0, ...compiles.values())
  // A changed comment is a changed file: each reload is applied (validated, snapshot built and swapped).
  const reload = async (n: number): Promise<string> => {
    await writeFile(file, `${demo}\n# reload ${n}\n`)
    return (await gw.gateway.reload()).outcome
  }

  compiles.clear()
  t.equal(await reload(1), 'applied')
  const afterOne = mostOnOneInstance()
  const outcomes = new Set<string>()
  for (let n = 2; n <= RELOADS; n++) outcomes.add(await reload(n))
  t.same([...outcomes], ['applied'])
  t.equal(mostOnOneInstance(), afterOne, `the most compiles on one Ajv instance after ${RELOADS} reloads is what one reload makes`)
})
