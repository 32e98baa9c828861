import { readFile } from 'node:fs/promises'
import t from 'tap'
import { buildConfigSchema } from '../../src/config/schema.js'
import { configRules } from '../../src/config/second-pass/config-rules.js'
import { catalog } from '../../src/pipeline/registry.js'
import { repoPath } from '../helpers/paths.js'

type Schema = { properties?: Record<string, Schema>, additionalProperties?: Schema | boolean, items?: Schema, description?: string }

/** Every key name the schema declares, with where it is, walking nested objects, maps and lists. */
function keys (schema: Schema, path: string, out: [string, string, Schema][]): [string, string, Schema][] {
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    out.push([name, `${path}${name}`, child])
    keys(child, `${path}${name}.`, out)
  }
  if (typeof schema.additionalProperties === 'object') keys(schema.additionalProperties, `${path}*.`, out)
  if (schema.items) keys(schema.items, `${path}[].`, out)
  return out
}

t.test('docs/configuration.md names every key of gateway.yaml, and every key has a description', async (t) => {
  const doc = await readFile(repoPath('docs/configuration.md'), 'utf8')
  const all = keys(buildConfigSchema(configRules(catalog).services) as Schema, '', [])
  t.ok(all.length > 80, `${all.length} keys checked`)
  for (const [name, path, schema] of all) {
    // Payloads of fan-out operations are user JSON Schema, not gateway keys.
    if (path.includes('payload_schema.')) continue
    t.ok(doc.includes(`\`${name}\``) || doc.includes(`.${name}\``) || doc.includes(`${name}:`), `${path} is documented`)
    t.ok(typeof schema.description === 'string' && schema.description.length > 0, `${path} has a description`)
  }
})
