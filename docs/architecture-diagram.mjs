// Renders the layers of architecture-layers.cjs as the diagram of docs/architecture.md, between its markers.
//   node docs/architecture-diagram.mjs          prints the diagram
//   node docs/architecture-diagram.mjs --write  rewrites docs/architecture.md (npm run architecture)
// test/unit/architecture-doc.test.ts fails when the page and the rules differ.
import { createRequire } from 'node:module'
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
// The generated part starts at BEGIN and ends where the hand-written END line starts.
export const BEGIN = 'The layers, top to bottom (written by `npm run architecture` from `architecture-layers.cjs`):'
export const END = 'Some folders are held to more than their layer:'
const PAGE = fileURLToPath(new URL('./architecture.md', import.meta.url))

/** The diagram: each layer a band, top to bottom; a band imports only the bands under it. */
export function renderLayers (config = require('../architecture-layers.cjs')) {
  const { layers, apart } = config
  const nameWidth = Math.max(...layers.map((l) => l.name.length))
  const folderWidth = Math.max(...layers.flatMap((l) => Object.keys(l.folders).map((f) => folderLabel(f).length)))
  const lines = []
  layers.forEach((layer, index) => {
    Object.entries(layer.folders).forEach(([folder, what], i) => {
      const band = i === 0 ? layer.name.padEnd(nameWidth) : ' '.repeat(nameWidth)
      lines.push(`${band} │ ${folderLabel(folder).padEnd(folderWidth)}  ${what}`)
    })
    if (index < layers.length - 1) lines.push(`${' '.repeat(nameWidth)} ▼`)
  })
  const apartLines = Object.entries(apart).map(([folder, what]) => `- \`${folderLabel(folder)}\` stands apart: ${what}.`)
  return [
    BEGIN,
    '',
    '```',
    ...lines,
    '```',
    '',
    ...apartLines,
    '',
    '',
  ].join('\n')
}

function folderLabel (folder) {
  return folder === '.' ? 'src/cli.ts' : `src/${folder}/`
}

/** The page with its generated part replaced by `diagram`. */
export function withDiagram (page, diagram) {
  const begin = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  if (begin < 0 || end < begin) throw new Error('docs/architecture.md has no generated layers section (markers missing)')
  return page.slice(0, begin) + diagram + page.slice(end)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const diagram = renderLayers()
  if (process.argv.includes('--write')) writeFileSync(PAGE, withDiagram(readFileSync(PAGE, 'utf8'), diagram))
  else console.log(diagram)
}
