import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { repoPath } from '../helpers/paths.js'

interface Layers {
  layers: Array<{ name: string, folders: Record<string, string> }>
  apart: Record<string, string>
}
interface Diagram {
  renderLayers (config?: Layers): string
  withDiagram (page: string, diagram: string): string
}

const require = createRequire(import.meta.url)
const layers = require(repoPath('architecture-layers.cjs')) as Layers
const diagram = await import(pathToFileURL(repoPath('docs/architecture-diagram.mjs')).href) as Diagram

t.test('docs/architecture.md shows the layers the import rules enforce', async (t) => {
  const page = readFileSync(repoPath('docs/architecture.md'), 'utf8')
  t.equal(diagram.withDiagram(page, diagram.renderLayers()), page, 'the page is what `npm run architecture` writes')
})

t.test('the check can fail: a layer added to the rules changes the expected page', async (t) => {
  const page = readFileSync(repoPath('docs/architecture.md'), 'utf8')
  const more: Layers = { ...layers, layers: [...layers.layers, { name: 'basement', folders: { cellar: 'a folder no one has' } }] }
  t.not(diagram.withDiagram(page, diagram.renderLayers(more)), page)
})

t.test('every folder of src/ sits in exactly one layer (or apart), and every named folder exists', async (t) => {
  const folders = readdirSync(repoPath('src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()
  const named = [...layers.layers.flatMap((l) => Object.keys(l.folders)), ...Object.keys(layers.apart)].filter((f) => f !== '.' && !f.includes('/'))
  t.same([...named].sort(), folders)
  t.equal(new Set(named).size, named.length, 'no folder is named twice')
  const nested = layers.layers.flatMap((l) => Object.keys(l.folders)).filter((f) => f.includes('/'))
  for (const folder of nested) t.ok(existsSync(repoPath('src', folder)), `src/${folder} exists`)
})

t.test('the src root holds only the entry', async (t) => {
  const files = readdirSync(repoPath('src'), { withFileTypes: true }).filter((d) => d.isFile()).map((d) => d.name)
  t.same(files, ['cli.ts'])
})
